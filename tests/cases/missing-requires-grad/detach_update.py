%%gradcheck
# Manual gradient descent that rebuilds the weight each step with .detach()
import torch

torch.manual_seed(0)
x = torch.randn(64, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
w = torch.zeros(3, 1, requires_grad=True)

for step in range(10):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    w = (w - 0.1 * w.grad).detach()
