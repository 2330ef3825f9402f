%%gradcheck
import torch

a = torch.randn(4, 3, requires_grad=True)
b = torch.randn(4, 2)
c = a @ b
