%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(2, 2)
D = nn.Linear(2, 1)
opt_G = torch.optim.SGD(G.parameters(), lr=0.1)
opt_D = torch.optim.SGD(D.parameters(), lr=0.1)

z = torch.randn(4, 2)
fake = G(z)
d_loss = D(fake.detach()).mean()

opt_D.zero_grad()
d_loss.backward()
opt_D.step()
g_loss = -D(fake).mean()
opt_G.zero_grad()
g_loss.backward()
opt_G.step()
