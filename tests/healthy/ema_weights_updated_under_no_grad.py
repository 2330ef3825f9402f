"""An exponential moving average of the weights: a deepcopy of the model with requires_grad off, updated after
each optimizer step under torch.no_grad() (ema_p.mul_(decay).add_(p, alpha=1 - decay)), evaluated at the end.

source: https://github.com/huggingface/pytorch-image-models/blob/main/timm/utils/model_ema.py (ModelEmaV2:
deepcopy, eval(), `with torch.no_grad(): ... ema_v.copy_(update_fn(ema_v, model_v))` after each step);
a small MLP, 30 steps.
"""
# %%
import copy

import torch
import torch.nn as nn


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999):
        super(ModelEmaV2, self).__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                ema_v.copy_(update_fn(ema_v, model_v))

    def update(self, model):
        self._update(model, update_fn=lambda e, m: self.decay * e + (1. - self.decay) * m)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 2))
model_ema = ModelEmaV2(model, decay=0.9)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
X, Y = torch.randn(48, 6), torch.randint(0, 2, (48,))
# %%
model.train()
for step in range(30):
    i = (step * 12) % 48
    output = model(X[i:i + 12])
    loss = criterion(output, Y[i:i + 12])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model_ema.update(model)
with torch.no_grad():
    ema_loss = criterion(model_ema.module(X), Y).item()
print(ema_loss)
