%%gradcheck
import torch

torch.manual_seed(0)
x, y = torch.randn(16, 3), torch.randn(16)
w = torch.randn(3, requires_grad=True)
loss = ((x @ w - y) ** 2).mean() + 0.01 * (w ** 2).sum()

for step in range(3):
    loss.backward(retain_graph=True)
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad.zero_()
