%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

for it in range(3):
    real = torch.randn(16, 2) + 3
    fake = G(torch.randn(16, 2))
    d_loss = bce(D(real), torch.ones(16, 1)) + bce(D(fake.detach()), torch.zeros(16, 1))
    opt_D.zero_grad()
    d_loss.backward()
    opt_D.step()
    g_loss = bce(D(fake), torch.ones(16, 1))
    opt_G.zero_grad()
    g_loss.backward()
    opt_G.step()
