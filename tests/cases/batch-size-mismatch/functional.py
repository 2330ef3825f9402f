%%gradcheck
import torch
import torch.nn.functional as F

X = torch.randn(100, 8)
y = torch.randint(0, 3, (100,))
W = torch.zeros(8, 3, requires_grad=True)
batch_size = 32

for i in range(0, 100, batch_size):
    xb = X[i:i + batch_size]
    yb = y[i:batch_size]
    loss = F.nll_loss(F.log_softmax(xb @ W, dim=1), yb)
    loss.backward()
