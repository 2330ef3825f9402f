%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(10, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 3))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
x, y = torch.randn(64, 10), torch.randint(0, 3, (64,))
val_x, val_y = torch.randn(32, 10), torch.randint(0, 3, (32,))

net.train()
for epoch in range(3):
    net.train()
    for i in range(0, 64, 16):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(net(x[i:i + 16]), y[i:i + 16])
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad():
        accuracy = (net(val_x).argmax(1) == val_y).float().mean()
    print(epoch, float(accuracy))
