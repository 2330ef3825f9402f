%%gradcheck
# A boolean mask cannot require grad either; no float version of it is meaningful here
import torch

mask = torch.rand(4) > 0.5
mask.requires_grad_()
