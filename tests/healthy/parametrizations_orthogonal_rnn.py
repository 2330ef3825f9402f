"""An RNN whose hidden-to-hidden weight is kept orthogonal by torch.nn.utils.parametrizations.orthogonal
(trained through its parametrization), on a synthetic sequence task.

source: https://pytorch.org/docs/stable/generated/torch.nn.utils.parametrizations.orthogonal.html
(`orth_linear = orthogonal(nn.Linear(20, 40))`, here applied to `rnn.weight_hh_l0` as orthogonal RNNs do)
and the parametrizations tutorial https://pytorch.org/tutorials/intermediate/parametrizations.html;
Adam, 25 steps.
"""
# %%
import torch
from torch import nn
from torch.nn.utils.parametrizations import orthogonal

torch.manual_seed(0)


class OrthogonalRNN(nn.Module):
    def __init__(self, d_in=3, hidden=16):
        super().__init__()
        self.rnn = orthogonal(nn.RNN(d_in, hidden, batch_first=True), "weight_hh_l0")
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])


model = OrthogonalRNN()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
batches = []
for _ in range(25):
    x = torch.randn(8, 20, 3)
    batches.append((x, x[:, :5, 0].sum(1, keepdim=True)))
# %%
for x, y in batches:
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
