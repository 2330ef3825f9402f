import torch

torch.manual_seed(0)
weights = torch.randn(4, requires_grad=True)
scores = weights.exp()
