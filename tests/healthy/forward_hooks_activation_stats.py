"""Forward hooks registered on named layers that store `output.detach()` in an `activation` dict, read after
each training step to log per-layer activation means and the fraction of dead ReLUs, then the hooks removed.

source: https://discuss.pytorch.org/t/how-can-l-load-my-best-model-as-a-feature-extractor-evaluator/17254/6
(the get_activation(name) hook factory, `activation[name] = output.detach()`) with
https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.register_forward_hook; an MLP on
random regression data, 30 Adam steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(32, 16)
        self.act2 = nn.ReLU()
        self.fc3 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc3(self.act2(self.fc2(self.act1(self.fc1(x)))))


activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()
    return hook


model = Net()
handles = [model.act1.register_forward_hook(get_activation('act1')),
           model.act2.register_forward_hook(get_activation('act2'))]
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
X = torch.randn(64, 10)
y = X[:, :3].sum(1, keepdim=True)
# %%
stats = {name: [] for name in ('act1', 'act2')}
for step in range(30):
    idx = torch.randint(0, 64, (16,))
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(X[idx]), y[idx])
    loss.backward()
    optimizer.step()
    for name, act in activation.items():
        stats[name].append((act.mean().item(), (act == 0).float().mean().item()))

for h in handles:
    h.remove()
