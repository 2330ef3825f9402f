"""Reptile on sine-wave regression: per task, a few plain SGD steps written by hand (`param.data -=
innerstepsize * param.grad.data` after model.zero_grad()), then the outer update that interpolates between the
weights before and after via load_state_dict; no torch.optim optimizer at all.

source: https://openai.com/index/reptile/ (John Schulman's reptile-sinewaves-demo.py from the Reptile post:
gen_task, train_on_batch and the outer loop kept; `ag.Variable(torch.Tensor(x))` as torch.tensor, the plots
dropped, 64 hidden units at 32, 30000 iterations at 6 of 5 inner steps = 30 SGD steps).
"""
# %%
from copy import deepcopy

import numpy as np
import torch
from torch import nn

seed = 0
innerstepsize = 0.02  # stepsize in inner SGD
innerepochs = 1  # number of epochs of each inner SGD
outerstepsize0 = 0.1  # stepsize of outer optimization, i.e., meta-optimization
niterations = 6  # number of outer updates; each iteration we sample one task and update on it

rng = np.random.RandomState(seed)
torch.manual_seed(seed)

# Define task distribution
x_all = np.linspace(-5, 5, 50)[:, None]  # All of the x points
ntrain = 10  # Size of training minibatches


def gen_task():
    "Generate classification problem"
    phase = rng.uniform(low=0, high=2 * np.pi)
    ampl = rng.uniform(0.1, 5)
    f_randomsine = lambda x: np.sin(x + phase) * ampl
    return f_randomsine


# Define model. Reptile paper uses ReLU, but Tanh gives slightly better results
model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))


def totorch(x):
    return torch.tensor(x, dtype=torch.float32)


def train_on_batch(x, y):
    x = totorch(x)
    y = totorch(y)
    model.zero_grad()
    ypred = model(x)
    loss = (ypred - y).pow(2).mean()
    loss.backward()
    for param in model.parameters():
        param.data -= innerstepsize * param.grad.data


def predict(x):
    x = totorch(x)
    return model(x).data.numpy()
# %%
# Reptile training loop
for iteration in range(niterations):
    weights_before = deepcopy(model.state_dict())
    # Generate task
    f = gen_task()
    y_all = f(x_all)
    # Do SGD on this task
    inds = rng.permutation(len(x_all))
    for _ in range(innerepochs):
        for start in range(0, len(x_all), ntrain):
            mbinds = inds[start:start + ntrain]
            train_on_batch(x_all[mbinds], y_all[mbinds])
    # Interpolate between current weights and trained weights from this task
    # I.e. (weights_before - weights_after) is the meta-gradient
    weights_after = model.state_dict()
    outerstepsize = outerstepsize0 * (1 - iteration / niterations)  # linear schedule
    model.load_state_dict({name: weights_before[name] + (weights_after[name] - weights_before[name]) * outerstepsize
                           for name in weights_before})
