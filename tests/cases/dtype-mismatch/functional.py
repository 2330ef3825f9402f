%%gradcheck
import torch
import torch.nn.functional as F

weight = torch.randn(2, 3, requires_grad=True)
bias = torch.zeros(2, requires_grad=True)
x = torch.randn(5, 3).double()
out = F.linear(x, weight, bias)
out.sum().backward()
