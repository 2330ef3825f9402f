%%gradcheck
import numpy as np
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(4, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        return self.out(h)


inputs = torch.from_numpy(np.random.rand(16, 4)).float()
net = Regressor()
prediction = net(inputs)
