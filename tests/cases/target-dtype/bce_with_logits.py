%%gradcheck
# Multi-label: each of 5 tags is on or off
import torch
import torch.nn as nn

model = nn.Linear(10, 5)
criterion = nn.BCEWithLogitsLoss()
x = torch.randn(2, 10)
tags = torch.tensor([[0, 1, 1, 0, 0], [1, 0, 0, 0, 1]])
loss = criterion(model(x), tags)
loss.backward()
