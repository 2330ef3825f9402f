%%gradcheck
# Fine-tuning with every layer frozen
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 3))
backbone.requires_grad_(False)
optimizer = torch.optim.SGD(backbone.parameters(), lr=0.01)
x, y = torch.randn(4, 10), torch.tensor([0, 2, 1, 0])
loss = nn.functional.cross_entropy(backbone(x), y)
loss.backward()
