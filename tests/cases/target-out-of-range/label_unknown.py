%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
head = nn.Linear(10, 2)
x = torch.randn(8, 10)
y = torch.tensor([0, 1, 1, 0, 2, 1, 0, 1])
loss = nn.CrossEntropyLoss()(head(x), y)
