%%gradcheck
# Zeroing one column of a weight matrix through an index: torch reports "a view of a leaf Variable"
import torch

W = torch.randn(3, 4, requires_grad=True)
W[:, 0] = 0.0
out = (W @ torch.ones(4)).sum()
out.backward()
