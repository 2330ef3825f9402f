%%gradcheck
import torch

a = torch.arange(6.0).reshape(2, 3)
b = a.clone()
assert a == b, "the copy must be equal"
