%%gradcheck
import torch
import torch.nn.functional as F

torch.manual_seed(0)
params = [torch.randn(2, 5, requires_grad=True), torch.zeros(2, requires_grad=True)]
optim = torch.optim.SGD(params, lr=0.05, momentum=0.9)
x, y = torch.randn(30, 5), torch.randint(0, 2, (30,))

step = 0
while step < 10:
    loss = F.cross_entropy(F.linear(x, *params), y)
    loss.backward()
    optim.step()
    step += 1
