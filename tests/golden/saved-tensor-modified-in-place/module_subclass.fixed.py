%%gradcheck
import torch
import torch.nn as nn


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.gate = nn.Sigmoid()
        self.act = nn.ReLU(inplace=False)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = self.gate(self.fc(x))
        h = self.act(h)
        return self.out(h)


torch.manual_seed(0)
net = GatedNet()
loss = net(torch.randn(5, 4)).pow(2).mean()
loss.backward()
