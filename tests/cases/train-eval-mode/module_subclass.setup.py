import torch
import torch.nn as nn


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.25)
        self.head = nn.Linear(4 * 6 * 6, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.head(self.drop(x.flatten(1)))


torch.manual_seed(0)
cnn = ConvNet()
