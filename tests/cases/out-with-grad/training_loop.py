%%gradcheck
# A training loop that reuses one output buffer for the matmul, to save allocations
import torch

torch.manual_seed(0)
W = torch.randn(4, 2, requires_grad=True)
optimizer = torch.optim.SGD([W], lr=0.1)
buffer = torch.empty(16, 2)
for step in range(3):
    x, y = torch.randn(16, 4), torch.randn(16, 2)
    optimizer.zero_grad()
    torch.matmul(x, W, out=buffer)
    loss = (buffer - y).pow(2).mean()
    loss.backward()
    optimizer.step()
