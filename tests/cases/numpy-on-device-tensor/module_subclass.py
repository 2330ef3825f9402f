%%gradcheck --no-nan-check
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 3)

    def embed(self, x):
        with torch.no_grad():
            return np.asarray(self.proj(x))


enc = Encoder().to("meta")  # "meta" stands in for "cuda" on this CPU-only machine
vectors = enc.embed(torch.randn(4, 6, device="meta"))
