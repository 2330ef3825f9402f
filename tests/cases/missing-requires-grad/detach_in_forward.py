%%gradcheck
# The model output is detached before the loss
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(5, 2)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
x, labels = torch.randn(10, 5), torch.randint(0, 2, (10,))
logits = net(x).detach()
loss = nn.functional.cross_entropy(logits, labels)
opt.zero_grad()
loss.backward()
opt.step()
