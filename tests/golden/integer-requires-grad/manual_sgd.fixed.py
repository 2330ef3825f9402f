%%gradcheck
# Manual gradient descent with integer starting weights
import torch

torch.manual_seed(0)
x = torch.randn(32, 2)
y = x @ torch.tensor([2.0, -1.0])
w = torch.zeros(2, dtype=torch.float32, requires_grad=True)
for step in range(10):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
