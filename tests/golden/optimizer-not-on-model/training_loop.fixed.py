%%gradcheck
import torch
import torch.nn as nn

model = nn.Linear(4, 1)  # re-created: `opt` still holds the old one's parameters
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
for _ in range(3):
    loss = (model(x) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
