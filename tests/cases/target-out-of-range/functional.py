%%gradcheck
import torch
import torch.nn.functional as F

logits = torch.randn(4, 3, requires_grad=True)
targets = torch.tensor([0, 2, -1, 1])  # -1: not labelled
loss = F.cross_entropy(logits, targets)
loss.backward()
