%%gradcheck
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(4, 3)
w = torch.randn(3, 2, requires_grad=True)
h = torch.sigmoid(x @ w)
h = F.relu(h, inplace=True)
loss = h.sum()
loss.backward()
