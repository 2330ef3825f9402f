"""A triplet network for metric learning: one embedding net applied to anchor, positive and negative,
TripletLoss = relu(d(a, p) - d(a, n) + margin).mean(), and the fit()/train_epoch() loop that keeps a list of
float losses and steps a StepLR per epoch.

source: https://github.com/adambielski/siamese-triplet (networks.py EmbeddingNet/TripletNet, losses.py
TripletLoss, trainer.py fit/train_epoch kept; metrics and logging dropped; MNIST triplets replaced by 60 random
triplets of 4 Gaussian classes in 10-D, batch 12, 6 epochs = 30 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim import lr_scheduler

torch.manual_seed(0)


class EmbeddingNet(nn.Module):
    def __init__(self):
        super(EmbeddingNet, self).__init__()
        self.fc = nn.Sequential(nn.Linear(10, 32), nn.PReLU(), nn.Linear(32, 32), nn.PReLU(), nn.Linear(32, 2))

    def forward(self, x):
        return self.fc(x)

    def get_embedding(self, x):
        return self.forward(x)


class TripletNet(nn.Module):
    def __init__(self, embedding_net):
        super(TripletNet, self).__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2, x3):
        output1 = self.embedding_net(x1)
        output2 = self.embedding_net(x2)
        output3 = self.embedding_net(x3)
        return output1, output2, output3

    def get_embedding(self, x):
        return self.embedding_net(x)


class TripletLoss(nn.Module):
    """Takes embeddings of an anchor sample, a positive sample and a negative sample"""

    def __init__(self, margin):
        super(TripletLoss, self).__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative, size_average=True):
        distance_positive = (anchor - positive).pow(2).sum(1)  # .pow(.5)
        distance_negative = (anchor - negative).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(distance_positive - distance_negative + self.margin)
        return losses.mean() if size_average else losses.sum()


centers = torch.randn(4, 10) * 2


def triplets(n):
    c = torch.randint(0, 4, (n,))
    other = (c + torch.randint(1, 4, (n,))) % 4
    point = lambda k: centers[k] + torch.randn(n, 10)
    return point(c), point(c), point(other)


anchors, positives, negatives = triplets(60)
train_loader = [((anchors[i:i + 12], positives[i:i + 12], negatives[i:i + 12]), []) for i in range(0, 60, 12)]
margin = 1.
embedding_net = EmbeddingNet()
model = TripletNet(embedding_net)
loss_fn = TripletLoss(margin)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
scheduler = lr_scheduler.StepLR(optimizer, 8, gamma=0.1, last_epoch=-1)
# %%
def train_epoch(train_loader, model, loss_fn, optimizer):
    model.train()
    losses = []
    total_loss = 0
    for batch_idx, (data, target) in enumerate(train_loader):
        target = target if len(target) > 0 else None
        if not type(data) in (tuple, list):
            data = (data,)

        optimizer.zero_grad()
        outputs = model(*data)

        if type(outputs) not in (tuple, list):
            outputs = (outputs,)

        loss_inputs = outputs
        if target is not None:
            target = (target,)
            loss_inputs += target

        loss_outputs = loss_fn(*loss_inputs)
        loss = loss_outputs[0] if type(loss_outputs) in (tuple, list) else loss_outputs
        losses.append(loss.item())
        total_loss += loss.item()
        loss.backward()
        optimizer.step()

    total_loss /= (batch_idx + 1)
    return total_loss


def fit(train_loader, model, loss_fn, optimizer, scheduler, n_epochs):
    history = []
    for epoch in range(0, n_epochs):
        train_loss = train_epoch(train_loader, model, loss_fn, optimizer)
        scheduler.step()
        history.append(train_loss)
    return history


history = fit(train_loader, model, loss_fn, optimizer, scheduler, 6)
