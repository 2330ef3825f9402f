%%gradcheck
# A derivative with torch.autograd.grad, the input made without requires_grad
import torch

t = torch.linspace(0.0, 1.0, 5, requires_grad=True)
position = t ** 3
velocity, = torch.autograd.grad(position.sum(), t)
