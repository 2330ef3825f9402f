%%gradcheck
import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
batch = torch.randn(4, 3)
loss1 = (batch @ w).pow(2).sum()
batch = torch.mul(batch, 2)
loss2 = (batch @ w).pow(2).sum()
(loss1 + loss2).backward()
