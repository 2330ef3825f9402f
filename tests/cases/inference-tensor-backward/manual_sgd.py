%%gradcheck
# Weights initialised under inference_mode, then made trainable
import torch

torch.manual_seed(0)
with torch.inference_mode():
    w = torch.randn(3) * 0.1
w.requires_grad_()
x, y = torch.randn(16, 3), torch.randn(16)
for _ in range(5):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
