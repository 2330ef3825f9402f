%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for step in range(4):
    opt.zero_grad()
    pred = model(x)
    loss = nn.functional.mse_loss(pred, y).requires_grad_()
    loss.backward()
    opt.step()
