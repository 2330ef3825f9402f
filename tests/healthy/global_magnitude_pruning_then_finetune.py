"""Train, prune, fine-tune: LeNet trained a few steps, then prune.global_unstructured removes the smallest 20%
of the weights across all layers (each `weight` becomes `weight_orig` times a `weight_mask` buffer, recomputed
by a forward pre-hook), training goes on with the same Adam (which still holds the renamed `weight_orig`
parameters), a second round prunes again and fine-tunes, and prune.remove makes the sparsity permanent.

source: https://pytorch.org/tutorials/intermediate/pruning_tutorial.html (LeNet, the "Global pruning" section
with `parameters_to_prune` and `prune.global_unstructured(..., pruning_method=prune.L1Unstructured,
amount=0.2)`, "Iterative Pruning" and "Remove pruning re-parametrization"), with a plain classification loop
around it (the tutorial prunes an untrained LeNet); 28x28 synthetic digits, 3 phases of 10 Adam steps.
"""
# %%
import torch
from torch import nn
import torch.nn.utils.prune as prune
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        # 1 input image channel, 6 output channels, 3x3 square conv kernel
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5x5 image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(start_dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


torch.manual_seed(0)
labels = torch.randint(0, 10, (320,))
images = 0.1 * torch.rand(320, 1, 28, 28)
for i, c in enumerate(labels.tolist()):
    images[i, 0, 2 * c:2 * c + 8, 4:24] += 0.8
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=32, shuffle=True)

model = LeNet()
optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
parameters_to_prune = (
    (model.conv1, 'weight'),
    (model.conv2, 'weight'),
    (model.fc1, 'weight'),
    (model.fc2, 'weight'),
    (model.fc3, 'weight'),
)


def train_one_epoch():
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
# %%
train_one_epoch()
for round in range(2):
    prune.global_unstructured(
        parameters_to_prune,
        pruning_method=prune.L1Unstructured,
        amount=0.2,
    )
    train_one_epoch()

for module, name in parameters_to_prune:
    prune.remove(module, name)
global_sparsity = float(sum(torch.sum(m.weight == 0) for m, _ in parameters_to_prune)) / float(
    sum(m.weight.nelement() for m, _ in parameters_to_prune))
