%%gradcheck
import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, n_in=4, hidden=8, n_tags=3):
        super().__init__()
        self.hidden = hidden
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_tags)

    def forward(self, x):
        h0 = torch.zeros(1, x.size(0), self.hidden)
        c0 = torch.zeros(1, x.size(0), self.hidden)
        out, _ = self.lstm(x, (h0, c0))
        return self.head(out)


tagger = Tagger().to("meta")  # "meta" stands in for "cuda" on this CPU-only machine
batch = torch.randn(2, 5, 4, device="meta")
scores = tagger(batch)
