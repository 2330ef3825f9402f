%%gradcheck
# x and y come from an earlier cell (on the CPU); "meta" stands in for "cuda" on this CPU-only machine
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(4, 1).to("meta")
loss = F.mse_loss(net(x), y)
