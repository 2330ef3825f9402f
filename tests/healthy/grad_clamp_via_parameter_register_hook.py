"""Gradient clipping done during backward instead of after it: a hook registered once on every parameter
(`p.register_hook(lambda grad: torch.clamp(grad, -clip_value, clip_value))`) returns a clamped gradient, so
.grad only ever receives clipped values; the loop itself is a plain zero_grad / backward / step on a GRU
sequence regressor that produces large gradients early on.

source: https://stackoverflow.com/questions/54716377/how-to-do-gradient-clipping-in-pytorch (the answers
show the variant that clips during backpropagation: `for p in model.parameters(): p.register_hook(lambda
grad: torch.clamp(grad, -clip_value, clip_value))`, a hook run each time a gradient has been computed);
a one-layer GRU predicting the running sum of its inputs, clip_value 0.5, SGD lr 0.05, 30 steps.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(1, 24, batch_first=True)
        self.out = nn.Linear(24, 1)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h)


model = Regressor()
clip_value = 0.5
for p in model.parameters():
    p.register_hook(lambda grad: torch.clamp(grad, -clip_value, clip_value))

optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
criterion = nn.MSELoss()
X = torch.randn(30, 16, 20, 1)
Y = X.cumsum(dim=2) / 4
# %%
for step in range(30):
    optimizer.zero_grad()
    loss = criterion(model(X[step]), Y[step])
    loss.backward()
    optimizer.step()
