%%gradcheck
# Continue a manual-SGD fit from weights saved on a GPU machine (weights_path comes from an earlier cell)
import torch

w, b = torch.load(weights_path, map_location="cpu")
w.requires_grad_()
b.requires_grad_()
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(10):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.05 * w.grad
        b -= 0.05 * b.grad
    w.grad = None
    b.grad = None
