%%gradcheck
import torch

torch.manual_seed(0)
x, y = torch.randn(32, 3), torch.randn(32, 1)
w1 = torch.randn(3, 8, requires_grad=True)
b1 = torch.zeros(8, requires_grad=True)
w2 = torch.randn(8, 1, requires_grad=True)

for step in range(5):
    h = torch.tanh(x @ w1)
    h = h.add(b1)
    pred = h @ w2
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (w1, b1, w2):
            p -= 0.01 * p.grad
            p.grad.zero_()
