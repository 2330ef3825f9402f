%%gradcheck
# `points` was loaded in an earlier cell
import torch
import torch.nn as nn

encoder = nn.Linear(2, 4)
codes = encoder(points.float())
