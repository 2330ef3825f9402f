%%gradcheck
# Resetting a tensor that requires grad with copy_()
import torch

torch.manual_seed(0)
theta = torch.randn(3, requires_grad=True)
with torch.no_grad():
    theta.copy_(torch.tensor([0.5, -0.5, 0.0]))
value = (theta ** 2).sum()
value.backward()
