%%gradcheck
# Linear regression by hand; the weights were created like the data
import torch

torch.manual_seed(0)
x = torch.randn(100, 1)
y = 3 * x + 2 + 0.1 * torch.randn(100, 1)
w = torch.zeros(1)
b = torch.zeros(1)
lr = 0.1

for step in range(20):
    pred = x * w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
