import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.rnn = nn.GRU(features + 1, hidden, batch_first=True)  # +1: the position feature
        self.head = nn.Linear(hidden, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out)


tagger = Tagger(6, 8)
