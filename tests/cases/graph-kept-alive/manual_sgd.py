%%gradcheck
# Linear regression by hand, keeping the loss curve
import torch

torch.manual_seed(0)
x = torch.randn(100, 1)
y = 3 * x + 2 + 0.1 * torch.randn(100, 1)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
losses = []

for step in range(20):
    loss = ((x * w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
        w.grad.zero_()
        b.grad.zero_()
    losses.append(loss)
print(len(losses), "steps")
