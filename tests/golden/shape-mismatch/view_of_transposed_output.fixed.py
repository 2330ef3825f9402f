%%gradcheck
import torch
import torch.nn as nn

gru = nn.GRU(5, 8)
seq = torch.randn(7, 2, 5)
out, _ = gru(seq)
flat = out.transpose(0, 1).reshape(-1, 8)  # (batch * time, hidden)
logits = nn.Linear(8, 3)(flat)
