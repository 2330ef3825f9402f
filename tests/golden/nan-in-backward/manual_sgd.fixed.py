%%gradcheck
import torch

torch.manual_seed(0)
x = torch.randn(32, 4)
y = (x[:, 0] > 0).float()
w = torch.zeros(4, requires_grad=True)
for _ in range(5):
    p = (x @ w).clamp(0, 1)  # a probability that is exactly 0
    loss = -(y * torch.log(p.clamp_min(1e-8))).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
