import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self, vocab=50, dim=16, tags=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.out = nn.Linear(dim, tags)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = self.lstm(h)[0]  # contextual features
        return self.out(h)