import torch

torch.manual_seed(0)
x = torch.randn(16, 4)
y = torch.randn(16, 1)
