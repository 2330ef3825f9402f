%%gradcheck
# Writing a sum into a preallocated tensor, then differentiating through it
import torch

a = torch.randn(3, requires_grad=True)
b = torch.randn(3)
c = torch.empty(3)
torch.add(a, b, out=c)
c.sum().backward()
print(a.grad)
