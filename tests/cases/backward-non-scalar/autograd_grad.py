%%gradcheck
# autograd.grad of an elementwise function: the output is a vector
import torch

x = torch.randn(6, requires_grad=True)
y = x ** 3 - 2 * x
dydx, = torch.autograd.grad(y, x)
print(dydx)  # 3x^2 - 2
