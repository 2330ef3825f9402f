%%gradcheck
# Converting the leaf to float64 after asking for gradients
import torch

x = torch.linspace(0, 1, 5).double().requires_grad_()
y = torch.exp(x).sum()
y.backward()
slope = x.grad
