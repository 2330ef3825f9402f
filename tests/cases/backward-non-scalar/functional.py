%%gradcheck
# The derivative of sin at several points: backward on the whole vector
import torch

x = torch.linspace(0, 3.14, 5, requires_grad=True)
y = torch.sin(x)
y.backward()
print(x.grad)  # should be cos(x)
