%%gradcheck
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 1)

    def forward(self, x):
        return self.body(x).squeeze(-1)


torch.manual_seed(0)
net = Regressor()
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
data, labels = torch.randn(32, 6), torch.randn(32)
total_loss = 0
batches = 0
while batches < 8:
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(data), labels)
    loss.backward()
    opt.step()
    total_loss = total_loss + loss.item()
    batches += 1
