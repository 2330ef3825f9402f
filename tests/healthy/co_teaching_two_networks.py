"""Co-teaching for noisy labels: two networks with their own Adam optimizers, each picks its small-loss samples
(argsort of its per-sample losses) and the OTHER network is trained on them, forget rate ramped up over the
first epochs; optimizer1 and optimizer2 stepped one after the other every batch.

source: https://github.com/bhanML/Co-teaching (loss.py loss_coteaching and the train() loop of main.py kept;
`reduce=False` written as reduction='none', np.argsort(loss.data) as torch.argsort(loss.detach()); CIFAR with
symmetric label noise replaced by 120 random vectors with 20 % flipped labels, two MLPs, 3 epochs of 10 batches).
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
np.random.seed(1)


def loss_coteaching(y_1, y_2, t, forget_rate, ind, noise_or_not):
    loss_1 = F.cross_entropy(y_1, t, reduction='none')
    ind_1_sorted = torch.argsort(loss_1.detach())
    loss_1_sorted = loss_1[ind_1_sorted]

    loss_2 = F.cross_entropy(y_2, t, reduction='none')
    ind_2_sorted = torch.argsort(loss_2.detach())
    loss_2_sorted = loss_2[ind_2_sorted]

    remember_rate = 1 - forget_rate
    num_remember = int(remember_rate * len(loss_1_sorted))

    pure_ratio_1 = np.sum(noise_or_not[ind[ind_1_sorted[:num_remember].numpy()]]) / float(num_remember)
    pure_ratio_2 = np.sum(noise_or_not[ind[ind_2_sorted[:num_remember].numpy()]]) / float(num_remember)

    ind_1_update = ind_1_sorted[:num_remember]
    ind_2_update = ind_2_sorted[:num_remember]
    # exchange
    loss_1_update = F.cross_entropy(y_1[ind_2_update], t[ind_2_update])
    loss_2_update = F.cross_entropy(y_2[ind_1_update], t[ind_1_update])

    return torch.sum(loss_1_update) / num_remember, torch.sum(loss_2_update) / num_remember, pure_ratio_1, pure_ratio_2


class MLP(nn.Module):
    def __init__(self, n_in=10, n_out=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, n_out))

    def forward(self, x):
        return self.net(x)


n, n_epoch, forget_rate, num_gradual = 120, 3, 0.2, 2
X = torch.randn(n, 10)
clean = X[:, :3].argmax(1)
noisy = clean.clone()
flip = torch.rand(n) < 0.2
noisy[flip] = torch.randint(0, 3, (int(flip.sum()),))
noise_or_not = (noisy == clean).numpy()
train_loader = [(X[i:i + 12], noisy[i:i + 12], np.arange(i, i + 12)) for i in range(0, n, 12)]

rate_schedule = np.ones(n_epoch) * forget_rate
rate_schedule[:num_gradual] = np.linspace(0, forget_rate, num_gradual)

cnn1, cnn2 = MLP(), MLP()
optimizer1 = torch.optim.Adam(cnn1.parameters(), lr=1e-3)
optimizer2 = torch.optim.Adam(cnn2.parameters(), lr=1e-3)
# %%
def train(train_loader, epoch, model1, optimizer1, model2, optimizer2):
    pure_ratio_1_list = []
    pure_ratio_2_list = []
    train_total = 0
    train_correct = 0
    train_total2 = 0
    train_correct2 = 0

    for i, (images, labels, indexes) in enumerate(train_loader):
        ind = indexes

        # Forward + Backward + Optimize
        logits1 = model1(images)
        train_total += 1
        train_correct += (logits1.argmax(1) == labels).float().mean().item()

        logits2 = model2(images)
        train_total2 += 1
        train_correct2 += (logits2.argmax(1) == labels).float().mean().item()
        loss_1, loss_2, pure_ratio_1, pure_ratio_2 = loss_coteaching(logits1, logits2, labels,
                                                                     rate_schedule[epoch], ind, noise_or_not)
        pure_ratio_1_list.append(100 * pure_ratio_1)
        pure_ratio_2_list.append(100 * pure_ratio_2)

        optimizer1.zero_grad()
        loss_1.backward()
        optimizer1.step()
        optimizer2.zero_grad()
        loss_2.backward()
        optimizer2.step()
    return train_correct / train_total, train_correct2 / train_total2, pure_ratio_1_list, pure_ratio_2_list


for epoch in range(n_epoch):
    cnn1.train()
    cnn2.train()
    train_acc1, train_acc2, pure_ratio_1_list, pure_ratio_2_list = train(train_loader, epoch, cnn1, optimizer1,
                                                                         cnn2, optimizer2)
