%%gradcheck
import torch
from torch import nn

class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = {"a": nn.Linear(3, 1), "b": nn.Linear(3, 1)}

    def forward(self, x):
        return sum(h(x) for h in self.heads.values())

net = Heads()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = net(torch.randn(5, 3)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
