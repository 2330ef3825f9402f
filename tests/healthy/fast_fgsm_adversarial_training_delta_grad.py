"""The "Fast is better than free" adversarial training of MNIST: for every batch a perturbation `delta` (a leaf with
requires_grad) starts uniform in [-eps, eps], one backward of the loss at X + delta gives delta.grad (and, as a
side effect, fills the model's .grad), delta takes one signed step and is clamped through `delta.data = ...`,
then detached; the model is trained on clamp(X + delta) after opt.zero_grad(). The learning rate follows a
cyclic schedule written into `opt.param_groups[0].update(lr=lr)` every batch.

source: https://github.com/locuslab/fast_adversarial/blob/master/MNIST/train_mnist.py (main(): the `fgsm`
branch and the training step kept as written) and MNIST/mnist_net.py (mnist_net); MNIST replaced by 28x28
synthetic digits (a class-dependent bright block plus noise), 3 epochs of 10 batches of 32, lr-max 5e-3,
epsilon 0.3, alpha 0.375, CPU.
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


def mnist_net():
    model = nn.Sequential(
        nn.Conv2d(1, 16, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 4, stride=2, padding=1),
        nn.ReLU(),
        Flatten(),
        nn.Linear(32 * 7 * 7, 100),
        nn.ReLU(),
        nn.Linear(100, 10)
    )
    return model


class Args:
    batch_size, epochs, epsilon, alpha, lr_max, lr_type, seed = 32, 3, 0.3, 0.375, 5e-3, 'cyclic', 0


args = Args()
np.random.seed(args.seed)
torch.manual_seed(args.seed)

labels = torch.randint(0, 10, (320,))
images = 0.1 * torch.rand(320, 1, 28, 28)
for i, c in enumerate(labels.tolist()):
    images[i, 0, 2 * c:2 * c + 8, 4:24] += 0.8
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images.clamp(0, 1), labels),
                                           batch_size=args.batch_size, shuffle=True)

model = mnist_net()
model.train()

opt = torch.optim.Adam(model.parameters(), lr=args.lr_max)
if args.lr_type == 'cyclic':
    lr_schedule = lambda t: np.interp([t], [0, args.epochs * 2 // 5, args.epochs], [0, args.lr_max, 0])[0]
elif args.lr_type == 'flat':
    lr_schedule = lambda t: args.lr_max
else:
    raise ValueError('Unknown lr_type')

criterion = nn.CrossEntropyLoss()
# %%
for epoch in range(args.epochs):
    train_loss = 0
    train_acc = 0
    train_n = 0
    for i, (X, y) in enumerate(train_loader):
        lr = lr_schedule(epoch + (i + 1) / len(train_loader))
        opt.param_groups[0].update(lr=lr)

        delta = torch.zeros_like(X).uniform_(-args.epsilon, args.epsilon)
        delta.requires_grad = True
        output = model(X + delta)
        loss = F.cross_entropy(output, y)
        loss.backward()
        grad = delta.grad.detach()
        delta.data = torch.clamp(delta + args.alpha * torch.sign(grad), -args.epsilon, args.epsilon)
        delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
        delta = delta.detach()

        output = model(torch.clamp(X + delta, 0, 1))
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        opt.step()

        train_loss += loss.item() * y.size(0)
        train_acc += (output.max(1)[1] == y).sum().item()
        train_n += y.size(0)
