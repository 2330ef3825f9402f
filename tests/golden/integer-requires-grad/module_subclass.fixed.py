%%gradcheck
# A module with a learnable per-feature scale written as integers
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1, 1, 1], dtype=torch.float32))
        self.linear = nn.Linear(3, 1)

    def forward(self, x):
        return self.linear(x * self.scale)


model = Scaled()
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
