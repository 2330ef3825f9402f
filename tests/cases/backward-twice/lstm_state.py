%%gradcheck
# An LSTM whose (h, c) state starts as None and is carried across batches
import torch
import torch.nn as nn

torch.manual_seed(0)
lstm = nn.LSTM(3, 5)
head = nn.Linear(5, 1)
params = list(lstm.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.05)
batches = [(torch.randn(7, 2, 3), torch.randn(7, 2, 1)) for _ in range(3)]
state = None
for inputs, targets in batches:
    out, state = lstm(inputs, state)
    loss = (head(out) - targets).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
