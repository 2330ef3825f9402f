%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(5, 8), nn.Dropout(0.3), nn.Linear(8, 1))
opt = torch.optim.SGD(mlp.parameters(), lr=0.1)
mlp.train(False)
x, y = torch.randn(12, 5), torch.randn(12, 1)
mlp.train()
out = mlp(x)
loss = nn.functional.mse_loss(out, y)
loss.backward()
opt.step()
