%%gradcheck
# Linear regression by hand: raw tensors and plain SGD over them
import torch

torch.manual_seed(0)
x = torch.randn(100, 1)
y = 3 * x + 2 + 0.1 * torch.randn(100, 1)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
sgd = torch.optim.SGD([w, b], lr=0.1)

for step in range(20):
    pred = x * w + b
    loss = ((pred - y) ** 2).mean()
    sgd.zero_grad()
    loss.backward()
    sgd.step()
