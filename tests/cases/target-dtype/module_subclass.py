%%gradcheck
import numpy as np
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, n_classes))

    def forward(self, x):
        return self.body(x)


net = Classifier(4)
inputs = torch.randn(8, 5)
targets = torch.from_numpy(np.array([0, 1, 2, 3, 3, 2, 1, 0])).float()
loss = nn.CrossEntropyLoss()(net(inputs), targets)
