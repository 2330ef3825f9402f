import torch
import torch.nn as nn


class Mixer(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.blocks = []
        for _ in range(depth):
            self.blocks.append(nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim)))
        self.head = nn.Linear(dim, 2)

    def forward(self, x):
        for block in self.blocks:
            x = x + block(x)
        return self.head(x)
