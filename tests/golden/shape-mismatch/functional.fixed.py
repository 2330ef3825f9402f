%%gradcheck
import torch
import torch.nn.functional as F

feats = torch.randn(2, 3, 4, 4)
weight = torch.randn(5, 48, requires_grad=True)
bias = torch.zeros(5, requires_grad=True)
feats = feats.flatten(1)
out = F.linear(feats, weight, bias)
out.sum().backward()
