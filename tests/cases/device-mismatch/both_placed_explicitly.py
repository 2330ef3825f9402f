%%gradcheck
# Both tensors are put on their devices on purpose: which one is meant is not clear, so no fix
import torch

a = torch.ones(3, device="meta")
b = torch.ones(3, device="cpu")
c = a + b
