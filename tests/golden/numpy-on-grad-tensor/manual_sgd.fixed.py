%%gradcheck
import torch

torch.manual_seed(0)
w = torch.randn(3, 1, requires_grad=True)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for step in range(5):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
    w.grad = None
print("learned weights:", w.detach().numpy().ravel())
