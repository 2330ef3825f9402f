%%gradcheck
# A hand-written RNN trained step by step; the hidden state flows from one step into the next
import torch

torch.manual_seed(0)
Wx = torch.randn(3, 4, requires_grad=True)
Wh = torch.randn(4, 4, requires_grad=True)
Wo = torch.randn(4, 1, requires_grad=True)
sequence = [(torch.randn(1, 3), torch.randn(1, 1)) for _ in range(6)]
lr = 0.01

h = torch.zeros(1, 4)
for x_t, y_t in sequence:
    h = h.detach()
    h = torch.tanh(x_t @ Wx + h @ Wh)
    loss = ((h @ Wo - y_t) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in (Wx, Wh, Wo):
            p -= lr * p.grad
            p.grad = None
