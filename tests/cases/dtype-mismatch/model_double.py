%%gradcheck
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model.double()
x = torch.randn(8, 3)
y = model(x)
