%%gradcheck
# requires_grad set as an attribute on an integer tensor
import torch

counts = torch.tensor([3, 1, 4], dtype=torch.float32)
counts.requires_grad = True
total = (counts * 2).sum()
