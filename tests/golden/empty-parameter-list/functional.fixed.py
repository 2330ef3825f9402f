%%gradcheck
import torch
import torch.nn as nn

encoder = nn.Linear(4, 4)
decoder = nn.Linear(4, 4)
params = list(encoder.parameters())
enc_opt = torch.optim.Adam(params, lr=1e-3)
dec_opt = torch.optim.Adam(params, lr=1e-3)
