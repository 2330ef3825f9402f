%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(64, 12)  # 12 measured features
y = torch.randn(64, 1)
reg = nn.Linear(12, 1)
lr = 0.05

for step in range(20):
    pred = reg(X)
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        for p in reg.parameters():
            p -= lr * p.grad
            p.grad = None
