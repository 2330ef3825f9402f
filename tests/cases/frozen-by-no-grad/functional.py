%%gradcheck
import torch
import torch.nn.functional as F

torch.manual_seed(0)
params = [torch.randn(2, 5, requires_grad=True), torch.zeros(2, requires_grad=True)]
optim = torch.optim.SGD(params, lr=0.05)
x, y = torch.randn(30, 5), torch.randint(0, 2, (30,))
for _ in range(10):
    optim.zero_grad()
    loss_value = F.cross_entropy(F.linear(x, *params), y).item()
    loss = torch.tensor(loss_value, requires_grad=True)
    loss.backward()
    optim.step()
