%%gradcheck
import torch
import torch.nn as nn

act = nn.ReLU()
opt = torch.optim.SGD(act.parameters(), lr=0.1)
