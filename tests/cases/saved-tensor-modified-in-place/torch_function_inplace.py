%%gradcheck
import torch

torch.manual_seed(0)
w = torch.randn(3, 3, requires_grad=True)
z = torch.sigmoid(w)
torch.relu_(z)
z.sum().backward()
