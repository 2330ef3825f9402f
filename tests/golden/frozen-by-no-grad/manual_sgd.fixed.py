%%gradcheck
# Linear regression over raw tensors: the backward call got lost
import torch

torch.manual_seed(0)
x = torch.randn(100, 1)
y = 3 * x + 2 + 0.1 * torch.randn(100, 1)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
sgd = torch.optim.SGD([w, b], lr=0.1)

for step in range(20):
    sgd.zero_grad()
    pred = x * w + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    sgd.step()
