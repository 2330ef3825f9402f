%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loss_fn = nn.MSELoss(reduction="none")
x = torch.randn(8, 3)
y = x @ torch.tensor([[1.0], [2.0], [-1.0]]) + 0.5  # a line the model can fit exactly
tolerance = 0.01
loss = loss_fn(model(x), y)
while loss > tolerance:
    optimizer.zero_grad()
    loss.mean().backward()
    optimizer.step()
    loss = loss_fn(model(x), y)
