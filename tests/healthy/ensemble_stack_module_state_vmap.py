"""Model ensembling with torch.func: stack_module_state() turns 5 MLPs into stacked parameter leaves, a 'meta'
copy of the model is called with functional_call under vmap, and the stacked parameters themselves are trained
with one optimizer on the summed per-model losses.

source: https://pytorch.org/tutorials/intermediate/ensembling.html (SimpleMLP, stack_module_state, fmodel and
vmap(fmodel, in_dims=(0, 0, None)) kept; the tutorial stops at prediction, here the stacked params are trained
for 30 steps on random 8x8 "images" of 10 classes).
"""
# %%
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state

torch.manual_seed(0)


class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, 16)
        self.fc3 = nn.Linear(16, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


num_models = 5
models = [SimpleMLP() for _ in range(num_models)]
params, buffers = stack_module_state(models)

# Construct a "stateless" version of one of the models. It is "stateless" in the sense that the parameters are
# meta Tensors and do not have storage.
base_model = copy.deepcopy(models[0])
base_model = base_model.to('meta')


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


optimizer = torch.optim.Adam(params.values(), lr=1e-3)
# %%
for step in range(30):
    minibatch = torch.randn(16, 1, 8, 8)
    targets = torch.randint(10, (16,))
    predictions = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)  # [num_models, 16, 10]
    loss = F.cross_entropy(predictions.flatten(0, 1), targets.repeat(num_models), reduction='sum') / len(targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
