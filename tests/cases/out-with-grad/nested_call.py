%%gradcheck
# The out= call sits inside another expression
import torch

a = torch.randn(3, requires_grad=True)
c = torch.empty(3)
y = torch.relu(torch.mul(a, 2.0, out=c))
