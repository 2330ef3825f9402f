%%gradcheck
# Manual gradient descent on a linear fit; the residuals are backpropagated as they are
import torch

torch.manual_seed(0)
xs = torch.randn(32, 3)
ys = xs @ torch.tensor([1.0, -2.0, 0.5]) + 0.1 * torch.randn(32)
w = torch.zeros(3, requires_grad=True)
lr = 0.01
for step in range(20):
    residual = xs @ w - ys
    residual.pow(2).backward()
    with torch.no_grad():
        w -= lr * w.grad
        w.grad.zero_()
