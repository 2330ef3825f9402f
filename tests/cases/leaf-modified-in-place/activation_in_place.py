%%gradcheck
# An in-place activation on a tensor that requires grad: part of the computation, not an update
import torch

z = torch.randn(4, requires_grad=True)
z.relu_()
total = z.sum()
total.backward()
