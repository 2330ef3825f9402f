%%gradcheck
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
params = model.parameters()
n_params = sum(p.numel() for p in params)  # uses the generator up
opt = torch.optim.SGD(params, lr=0.1)
