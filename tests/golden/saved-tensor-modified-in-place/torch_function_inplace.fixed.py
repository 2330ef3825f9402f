%%gradcheck
import torch

torch.manual_seed(0)
w = torch.randn(3, 3, requires_grad=True)
z = torch.sigmoid(w)
z = torch.relu(z)
z.sum().backward()
