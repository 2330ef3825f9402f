%%gradcheck
import torch
import torch.nn as nn

net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))  # a fresh start, too late
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
x = torch.randn(10, 3)
for _ in range(2):
    optimizer.zero_grad()
    net(x).sum().backward()
    optimizer.step()
