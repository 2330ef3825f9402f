%%gradcheck --no-nan-check
import torch

images = torch.rand(2, 3, 8, 8, device="meta")  # "meta" stands in for "cuda" on this CPU-only machine
mean = images.mean(dim=(0, 2, 3))
print(mean.numpy())
