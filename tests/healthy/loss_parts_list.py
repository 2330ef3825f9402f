"""Several loss terms collected in a list each step and summed before backward().

source: https://github.com/facebookresearch/detectron2/blob/main/detectron2/engine/train_loop.py (SimpleTrainer:
`losses = sum(loss_dict.values())` then `losses.backward()`), here with an auxiliary head, 30 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
trunk = nn.Linear(6, 12)
main_head, aux_head = nn.Linear(12, 2), nn.Linear(12, 2)
opt = torch.optim.SGD([*trunk.parameters(), *main_head.parameters(), *aux_head.parameters()], lr=0.1)
data = [(torch.randn(8, 6), torch.randint(0, 2, (8,))) for _ in range(30)]
# %%
for xb, yb in data:
    parts = []
    z = torch.relu(trunk(xb))
    parts.append(F.cross_entropy(main_head(z), yb))
    parts.append(0.3 * F.cross_entropy(aux_head(z), yb))
    opt.zero_grad()
    sum(parts).backward()
    opt.step()
