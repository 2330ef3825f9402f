%%gradcheck
import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x, y = torch.randn(16, 3), torch.randn(16)
for step in range(20):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        if (w.grad.abs() < 1e-4).all():
            break
    w.grad = None
