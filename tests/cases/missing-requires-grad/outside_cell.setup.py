import torch
weights = torch.randn(3)
