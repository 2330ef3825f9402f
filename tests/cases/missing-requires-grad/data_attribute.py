%%gradcheck
# .data used to read the prediction
import torch

torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
x = torch.randn(4)
pred = (w * x).sum().data
loss = (pred - 1.0) ** 2
loss.backward()
