%%gradcheck --fast
import torch

torch.manual_seed(0)
a = torch.randn(2, 3, requires_grad=True)
x = torch.tanh(a)
x *= 2
x.sum().backward()
