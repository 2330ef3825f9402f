%%gradcheck
import torch

mask = torch.tensor([True, False, True])
if mask:
    print("masked")
