%%gradcheck
# A GAN step: the discriminator's loss uses the fake batch without detach()
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
D = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=0.01)
opt_d = torch.optim.SGD(D.parameters(), lr=0.01)
bce = nn.BCEWithLogitsLoss()
real = torch.randn(8, 2)

fake = G(torch.randn(8, 2))
d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
opt_d.zero_grad()
d_loss.backward()
opt_d.step()
g_loss = bce(D(fake), torch.ones(8, 1))
opt_g.zero_grad()
g_loss.backward()
opt_g.step()
