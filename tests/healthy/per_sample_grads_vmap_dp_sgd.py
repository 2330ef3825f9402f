"""Per-sample gradients with torch.func (functional_call + grad + vmap over the batch, params and buffers
detached), each sample's gradient clipped to norm C, summed, Gaussian noise added, and the result written to
p.grad before optimizer.step(): a hand-written DP-SGD step.

source: https://pytorch.org/tutorials/intermediate/per_sample_grads.html (SimpleCNN, compute_loss, ft_compute_grad
and ft_compute_sample_grad kept as written) with the DP-SGD update of Abadi et al. (https://arxiv.org/abs/1607.00133)
on top; MNIST replaced by 16 random 1x8x8 images per step, the CNN shrunk, 25 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)


class SimpleCNN(nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.fc1 = nn.Linear(8 * 2 * 2, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


model = SimpleCNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
max_grad_norm, noise_multiplier = 1.0, 0.5


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
# %%
losses = []
for step in range(25):
    data = torch.randn(16, 1, 8, 8)
    targets = torch.randint(10, (16,))

    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)

    # clip each sample's whole gradient to max_grad_norm, sum, add noise, average
    norms = torch.stack([g.flatten(1).norm(dim=1) for g in ft_per_sample_grads.values()], dim=1).norm(dim=1)
    factor = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    optimizer.zero_grad()
    for name, p in model.named_parameters():
        g = ft_per_sample_grads[name]
        clipped = (g * factor.view(-1, *([1] * (g.dim() - 1)))).sum(0)
        noise = torch.randn_like(clipped) * noise_multiplier * max_grad_norm
        p.grad = (clipped + noise) / len(data)
    optimizer.step()

    with torch.no_grad():
        losses.append(loss_fn(model(data), targets).item())
