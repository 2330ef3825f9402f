%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
epoch_loss = torch.zeros(())
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    epoch_loss += (loss * x.size(0)).detach()
print("mean loss", epoch_loss.item() / (5 * x.size(0)))
