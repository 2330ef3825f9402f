%%gradcheck --no-nan-check
# --no-nan-check: the NaN check of anomaly mode reads values, and "meta" tensors have none
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device("meta")  # stands in for torch.device("cuda") on this CPU-only machine
model = nn.Linear(4, 1).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
X = torch.randn(64, 4, device=device)
Y = torch.randn(64, 1, device=device)
for i in range(0, 64, 16):
    xb = X[i:i + 16]
    yb = Y[i:i + 16]
    loss = F.mse_loss(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
