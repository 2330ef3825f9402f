%%gradcheck
# A model that returns one loss per sample; the caller forgets to average them
import torch
import torch.nn as nn
import torch.nn.functional as F


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x, labels):
        logits = self.fc(x)
        return F.cross_entropy(logits, labels, reduction="none")


torch.manual_seed(0)
model = Scorer()
x, labels = torch.randn(8, 5), torch.randint(0, 3, (8,))
per_sample_losses = model(x, labels)
per_sample_losses.backward()
