%%gradcheck
# Per-sample losses asked for on purpose (to weight them), then the weighting was forgotten
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 2)
criterion = nn.CrossEntropyLoss(reduction="none")
x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
weights = torch.rand(8)
loss = criterion(model(x), y)
loss.backward()
