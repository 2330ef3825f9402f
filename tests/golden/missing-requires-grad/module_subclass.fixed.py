%%gradcheck
# A model whose forward pass runs under no_grad
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.hidden(x))
        y = self.out(h)
        return y


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x, target = torch.randn(8, 3), torch.randn(8, 1)
loss = nn.functional.mse_loss(model(x), target)
opt.zero_grad()
loss.backward()
opt.step()
