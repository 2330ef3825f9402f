%%gradcheck
import torch
import torch.nn as nn


class NoisyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.fc(x))
        noise = 0.1 * torch.randn(h.shape)
        return self.out(h + noise)


net = NoisyNet().to("meta")  # "meta" stands in for "cuda" on this CPU-only machine
y = net(torch.randn(2, 4, device="meta"))
