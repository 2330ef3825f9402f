"""A categorical VAE with the Gumbel-softmax trick: Gumbel noise added to the logits, softmax at a temperature
that is annealed during training, optionally a straight-through hard sample `(y_hard - y).detach() + y`, and
a KL term against the uniform categorical prior.

source: https://github.com/YongfeiYan/Gumbel_Softmax_VAE/blob/master/gumbel_softmax_vae.py (sample_gumbel,
gumbel_softmax, VAE_gumbel, loss_function and train() kept; `size_average=False` written as reduction='sum';
MNIST 784 -> 512 -> 256 shrunk to 36 -> 24 -> 16 on random binary images, hard=True, annealing every 5 batches
instead of 100, 2 epochs of 15 batches = 30 steps).
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)
latent_dim, categorical_dim = 3, 4
temp, temp_min, ANNEAL_RATE, hard = 1.0, 0.5, 0.00003, True
D = 36


def sample_gumbel(shape, eps=1e-20):
    U = torch.rand(shape)
    return -torch.log(-torch.log(U + eps) + eps)


def gumbel_softmax_sample(logits, temperature):
    y = logits + sample_gumbel(logits.size())
    return F.softmax(y / temperature, dim=-1)


def gumbel_softmax(logits, temperature, hard=False):
    """ST-gumple-softmax: input [*, n_class], return [*, n_class] an one-hot vector"""
    y = gumbel_softmax_sample(logits, temperature)
    if not hard:
        return y.view(-1, latent_dim * categorical_dim)
    shape = y.size()
    _, ind = y.max(dim=-1)
    y_hard = torch.zeros_like(y).view(-1, shape[-1])
    y_hard.scatter_(1, ind.view(-1, 1), 1)
    y_hard = y_hard.view(*shape)
    # Set gradients w.r.t. y_hard gradients w.r.t. y
    y_hard = (y_hard - y).detach() + y
    return y_hard.view(-1, latent_dim * categorical_dim)


class VAE_gumbel(nn.Module):
    def __init__(self, temp):
        super(VAE_gumbel, self).__init__()
        self.fc1 = nn.Linear(D, 24)
        self.fc2 = nn.Linear(24, 16)
        self.fc3 = nn.Linear(16, latent_dim * categorical_dim)
        self.fc4 = nn.Linear(latent_dim * categorical_dim, 16)
        self.fc5 = nn.Linear(16, 24)
        self.fc6 = nn.Linear(24, D)
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def encode(self, x):
        h1 = self.relu(self.fc1(x))
        h2 = self.relu(self.fc2(h1))
        return self.relu(self.fc3(h2))

    def decode(self, z):
        h4 = self.relu(self.fc4(z))
        h5 = self.relu(self.fc5(h4))
        return self.sigmoid(self.fc6(h5))

    def forward(self, x, temp, hard):
        q = self.encode(x.view(-1, D))
        q_y = q.view(q.size(0), latent_dim, categorical_dim)
        z = gumbel_softmax(q_y, temp, hard)
        return self.decode(z), F.softmax(q_y, dim=-1).reshape(*q.size())


def loss_function(recon_x, x, qy):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, D), reduction='sum') / x.shape[0]
    log_ratio = torch.log(qy * categorical_dim + 1e-20)
    KLD = torch.sum(qy * log_ratio, dim=-1).mean()
    return BCE + KLD


images = (torch.rand(15 * 8, D) > 0.5).float()
train_loader = [(images[i:i + 8], None) for i in range(0, len(images), 8)]
model = VAE_gumbel(temp)
optimizer = optim.Adam(model.parameters(), lr=1e-3)
# %%
def train(epoch):
    model.train()
    train_loss = 0
    temp = 1.0
    for batch_idx, (data, _) in enumerate(train_loader):
        optimizer.zero_grad()
        recon_batch, qy = model(data, temp, hard)
        loss = loss_function(recon_batch, data, qy)
        loss.backward()
        train_loss += loss.item() * len(data)
        optimizer.step()
        if batch_idx % 5 == 1:
            temp = np.maximum(temp * np.exp(-ANNEAL_RATE * batch_idx), temp_min)
    return train_loss / (len(train_loader) * 8)


for epoch in range(1, 3):
    epoch_loss = train(epoch)
