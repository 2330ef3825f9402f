%%gradcheck
# A whole training step put under no_grad, backward() included
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3), torch.randn(4, 1)
with torch.no_grad():
    out = model(x)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    opt.step()
