%%gradcheck
# A whole training step decorated with no_grad
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.no_grad()
def train_step(x, y):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    return loss


train_step(torch.randn(8, 3), torch.randn(8, 1))
