%%gradcheck
# Looking at the gradient, then calling backward() again to accumulate it
import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x.exp() * x).sum()
y.backward()
print(x.grad)
y.backward()
print(x.grad)  # twice the gradient
