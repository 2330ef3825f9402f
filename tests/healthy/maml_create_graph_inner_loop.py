"""MAML as in Torchmeta's example: per task, an inner step `params = param - step_size * grad` with
torch.autograd.grad(inner_loss, params.values(), create_graph=not first_order), the query loss of the adapted
params accumulated into `outer_loss = torch.tensor(0.)` with +=, outer_loss.div_(batch_size), then
outer_loss.backward() and the meta-optimizer step.

source: https://github.com/tristandeleu/pytorch-meta/blob/master/examples/maml/train.py and
torchmeta/utils/gradient_based.py (gradient_update_parameters and the train loop kept; the MetaModule written
as a two-layer MLP with a functional forward(x, params); Omniglot replaced by random 5-way 5-shot tasks of
Gaussian classes in 8-D, 4 tasks per batch, 25 meta-steps).
"""
# %%
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MetaMLP(nn.Module):
    """A small MetaModule: forward() takes an optional dict of (adapted) parameters."""

    def __init__(self, in_features, hidden, out_features):
        super().__init__()
        self.layer1 = nn.Linear(in_features, hidden)
        self.layer2 = nn.Linear(hidden, out_features)

    def meta_named_parameters(self):
        return self.named_parameters()

    def forward(self, inputs, params=None):
        if params is None:
            params = OrderedDict(self.meta_named_parameters())
        x = F.relu(F.linear(inputs, params['layer1.weight'], params['layer1.bias']))
        return F.linear(x, params['layer2.weight'], params['layer2.bias'])


def gradient_update_parameters(model, loss, params=None, step_size=0.5, first_order=False):
    if params is None:
        params = OrderedDict(model.meta_named_parameters())
    grads = torch.autograd.grad(loss, params.values(), create_graph=not first_order)
    updated_params = OrderedDict()
    if isinstance(step_size, (dict, OrderedDict)):
        for (name, param), grad in zip(params.items(), grads):
            updated_params[name] = param - step_size[name] * grad
    else:
        for (name, param), grad in zip(params.items(), grads):
            updated_params[name] = param - step_size * grad
    return updated_params


def get_accuracy(logits, targets):
    _, predictions = torch.max(logits, dim=-1)
    return torch.mean(predictions.eq(targets).float())


def task_batch(batch_size=4, ways=5, shots=5, queries=5, dim=8):
    def one_task():
        centers = torch.randn(ways, dim) * 2
        ys = torch.arange(ways).repeat_interleave(shots)
        yq = torch.arange(ways).repeat_interleave(queries)
        return centers[ys] + torch.randn(len(ys), dim), ys, centers[yq] + torch.randn(len(yq), dim), yq
    tasks = [one_task() for _ in range(batch_size)]
    return {'train': (torch.stack([t[0] for t in tasks]), torch.stack([t[1] for t in tasks])),
            'test': (torch.stack([t[2] for t in tasks]), torch.stack([t[3] for t in tasks]))}


class Args:
    step_size = 0.4
    first_order = False
    batch_size = 4
    num_batches = 25


args = Args()
model = MetaMLP(8, 32, 5)
meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
dataloader = [task_batch(args.batch_size) for _ in range(args.num_batches)]
# %%
model.train()
for batch_idx, batch in enumerate(dataloader):
    model.zero_grad()

    train_inputs, train_targets = batch['train']
    test_inputs, test_targets = batch['test']

    outer_loss = torch.tensor(0.)
    accuracy = torch.tensor(0.)
    for task_idx, (train_input, train_target, test_input, test_target) in enumerate(
            zip(train_inputs, train_targets, test_inputs, test_targets)):
        train_logit = model(train_input)
        inner_loss = F.cross_entropy(train_logit, train_target)

        model.zero_grad()
        params = gradient_update_parameters(model, inner_loss, step_size=args.step_size,
                                            first_order=args.first_order)

        test_logit = model(test_input, params=params)
        outer_loss += F.cross_entropy(test_logit, test_target)

        with torch.no_grad():
            accuracy += get_accuracy(test_logit, test_target)

    outer_loss.div_(args.batch_size)
    accuracy.div_(args.batch_size)

    outer_loss.backward()
    meta_optimizer.step()

    if batch_idx >= args.num_batches:
        break
