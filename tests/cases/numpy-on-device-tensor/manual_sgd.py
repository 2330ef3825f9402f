%%gradcheck --no-nan-check
import torch

device = "meta"  # stands in for "cuda" on this CPU-only machine
w = torch.zeros(3, device=device, requires_grad=True)
x, y = torch.randn(10, 3, device=device), torch.randn(10, device=device)
loss = ((x @ w - y) ** 2).mean()
loss.backward()
with torch.no_grad():
    w -= 0.1 * w.grad
print(w.numpy())
