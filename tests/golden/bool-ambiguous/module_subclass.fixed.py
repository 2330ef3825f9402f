%%gradcheck
import torch
import torch.nn as nn


class Clipper(nn.Module):
    def __init__(self, limit):
        super().__init__()
        self.limit = limit

    def forward(self, x):
        if (x > self.limit).all():
            x = x.clamp(max=self.limit)
        return x


clip = Clipper(1.0)
out = clip(torch.randn(6) * 3)
