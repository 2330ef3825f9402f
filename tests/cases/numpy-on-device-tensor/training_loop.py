%%gradcheck --no-nan-check
# --no-nan-check: the NaN check of anomaly mode reads values, and "meta" tensors have none
import torch
import torch.nn as nn

device = torch.device("meta")  # stands in for torch.device("cuda") on this CPU-only machine
model = nn.Linear(4, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4, device=device), torch.randn(8, 2, device=device)
losses = []
for epoch in range(2):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach().numpy())
