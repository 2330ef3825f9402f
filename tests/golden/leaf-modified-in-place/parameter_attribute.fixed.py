%%gradcheck
# Updating a module's parameters by attribute after backward()
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(2, 1)
model(torch.randn(3, 2)).sum().backward()
with torch.no_grad():
    model.weight -= 0.1 * model.weight.grad
    model.bias -= 0.1 * model.bias.grad
