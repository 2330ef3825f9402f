%%gradcheck
import torch

batch = torch.randn(2, 3, 8, 8)
codes = encoder(batch)
