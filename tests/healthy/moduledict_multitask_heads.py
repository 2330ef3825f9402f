"""A multi-task model: a shared trunk and one head per task held in an nn.ModuleDict, the per-task losses
summed and backpropagated together, one Adam over everything.

source: https://pytorch.org/docs/stable/generated/torch.nn.ModuleDict.html (`self.choices =
nn.ModuleDict({...})`, indexing the dict by key in forward) used for hard parameter sharing as in Ruder, "An
Overview of Multi-Task Learning in Deep Neural Networks" (https://arxiv.org/abs/1706.05098); synthetic
classification + regression targets, 25 steps.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, d_in=10, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.heads = nn.ModuleDict({
            "category": nn.Linear(hidden, 4),
            "score": nn.Linear(hidden, 1),
            "flag": nn.Linear(hidden, 1),
        })

    def forward(self, x, task):
        return self.heads[task](self.trunk(x))


criteria = {
    "category": lambda out, y: nn.functional.cross_entropy(out, y),
    "score": lambda out, y: nn.functional.mse_loss(out.squeeze(1), y),
    "flag": lambda out, y: nn.functional.binary_cross_entropy_with_logits(out.squeeze(1), y),
}
model = MultiTaskNet()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
X = torch.randn(25, 16, 10)
targets = {"category": X[..., :4].argmax(-1), "score": X[..., 4] * 2, "flag": (X[..., 5] > 0).float()}
# %%
for step in range(25):
    optimizer.zero_grad()
    loss = 0
    for task in model.heads:
        out = model(X[step], task)
        loss = loss + criteria[task](out, targets[task][step])
    loss.backward()
    optimizer.step()
