%%gradcheck
# The LSTM and its input are on the CPU, the hidden state is put on "meta" explicitly: no fix
import torch
import torch.nn as nn

lstm = nn.LSTM(2, 3)
seq = torch.randn(4, 1, 2)
h0 = torch.zeros(1, 1, 3, device="meta")
c0 = torch.zeros(1, 1, 3, device="meta")
out, (h, c) = lstm(seq, (h0, c0))
