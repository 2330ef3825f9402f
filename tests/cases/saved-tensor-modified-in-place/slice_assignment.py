%%gradcheck
import torch

torch.manual_seed(0)
a = torch.randn(3, 2, requires_grad=True)
x = torch.sigmoid(a)
x[:, 0] = 0  # mask the first feature
x.sum().backward()
