import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.proj = nn.Linear(4 * 8 * 8, 16)

    def forward(self, x):
        return self.proj(self.conv(x).flatten(1))


encoder = Encoder()