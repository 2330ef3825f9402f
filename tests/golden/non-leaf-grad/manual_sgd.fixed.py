%%gradcheck
# Manual gradient descent that rebinds the weights instead of updating them
import torch

torch.manual_seed(0)
x = torch.randn(50, 2)
y = x @ torch.tensor([1.5, -0.5]) + 0.3
w = torch.zeros(2, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

for step in range(5):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
