%%gradcheck
import torch
import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 16)
        self.head = nn.Linear(16, 2)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(x)))


torch.manual_seed(0)
net = TinyNet()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
data = [(torch.randn(8, 3), torch.randint(0, 2, (8,))) for _ in range(5)]
for xb, yb in data:
    logits = net(xb)
    loss = nn.functional.cross_entropy(logits, yb)
    loss.backward()
    opt.step()
