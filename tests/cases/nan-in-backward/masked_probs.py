%%gradcheck
import torch

w = torch.zeros(4, requires_grad=True)
x = torch.rand(16, 4)
for _ in range(5):
    probs = torch.sigmoid(x @ w) * (x[:, 0] > 2)  # all masked to 0
    loss = -torch.log(probs).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
