%%gradcheck
import torch
import torch.nn as nn

dev = torch.device("meta")  # stands in for torch.device("cuda") on this CPU-only machine
gru = nn.GRU(input_size=3, hidden_size=5).to(dev)
seq = torch.randn(7, 2, 3, device=dev)
h0 = torch.zeros(1, 2, 5, device=dev)
out, h_n = gru(seq, h0)
