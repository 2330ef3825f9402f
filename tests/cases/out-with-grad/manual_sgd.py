%%gradcheck
# Manual SGD whose prediction is written with out= and an alpha keyword
import torch

torch.manual_seed(0)
x, y = torch.randn(20), torch.randn(20)
w = torch.zeros(1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
pred = torch.empty(20)
for _ in range(10):
    torch.add(bias, x, alpha=2.0, out=pred)
    pred = pred * w
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (w, bias):
            p -= 0.1 * p.grad
            p.grad.zero_()
