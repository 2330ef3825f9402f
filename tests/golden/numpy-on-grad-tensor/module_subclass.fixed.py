%%gradcheck
import numpy as np
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        scores = self.fc(x)
        self.last_scores = scores.detach().numpy()  # kept for inspection
        return scores


model = Scorer()
out = model(torch.randn(5, 4))
