%%gradcheck
# A complex-valued objective: a single number, but not a real one
import torch

z = torch.randn(4, dtype=torch.cfloat, requires_grad=True)
energy = (z * z).sum()
energy.backward()
