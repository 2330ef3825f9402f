"""A third-party optimizer written as a torch.optim.Optimizer subclass: Lion, whose @torch.no_grad() step
skips parameters without a .grad, applies the weight decay by hand (`p.data.mul_(1. - lr * wd)`), updates by
the sign of an interpolated momentum (`p.add_(update, alpha=-lr)`) and keeps its exp_avg in self.state;
used like any optimizer on a small classifier, with a closure-free step and a LambdaLR warmup.

source: https://github.com/lucidrains/lion-pytorch/blob/main/lion_pytorch/lion_pytorch.py (update_fn and the
Lion class kept, the triton path dropped) with the README's usage (`opt = Lion(model.parameters(), lr=1e-4,
weight_decay=1e-2)`, then backward, opt.step(), opt.zero_grad()); an MLP on synthetic 3-class data, lr 3e-3
(Lion wants a lr 3-10x below AdamW's), 30 steps.
"""
# %%
from typing import Callable, Optional, Tuple

import torch
from torch import nn
from torch.optim.optimizer import Optimizer


def exists(val):
    return val is not None


def update_fn(p, grad, exp_avg, lr, wd, beta1, beta2):
    # stepweight decay

    p.data.mul_(1. - lr * wd)

    # weight update

    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1. - beta1).sign_()
    p.add_(update, alpha=-lr)

    # decay the momentum running average coefficient

    exp_avg.mul_(beta2).add_(grad, alpha=1. - beta2)


class Lion(Optimizer):
    def __init__(
        self,
        params,
        lr: float = 1e-4,
        betas: Tuple[float, float] = (0.9, 0.99),
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
    ):
        assert lr > 0.
        assert all([0. <= beta <= 1. for beta in betas])

        self._init_lr = lr
        self.decoupled_wd = decoupled_weight_decay

        defaults = dict(
            lr=lr,
            betas=betas,
            weight_decay=weight_decay
        )

        super().__init__(params, defaults)

        self.update_fn = update_fn

    @torch.no_grad()
    def step(
        self,
        closure: Optional[Callable] = None
    ):

        loss = None
        if exists(closure):
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            for p in filter(lambda p: exists(p.grad), group['params']):

                grad, lr, wd, beta1, beta2, state, decoupled_wd, init_lr = (
                    p.grad, group['lr'], group['weight_decay'], *group['betas'], self.state[p],
                    self.decoupled_wd, self._init_lr)

                # maybe decoupled weight decay

                if decoupled_wd:
                    wd /= init_lr

                # init state - exponential moving average of gradient values

                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)

                exp_avg = state['exp_avg']

                self.update_fn(
                    p,
                    grad,
                    exp_avg,
                    lr,
                    wd,
                    beta1,
                    beta2
                )

        return loss


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3))
X = torch.randn(240, 10)
y = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()
opt = Lion(model.parameters(), lr=3e-3, weight_decay=1e-2)
scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))
loss_fn = nn.CrossEntropyLoss()
# %%
for step in range(30):
    i = (step * 24) % 240
    loss = loss_fn(model(X[i:i + 24]), y[i:i + 24])
    loss.backward()
    opt.step()
    opt.zero_grad()
    scheduler.step()
