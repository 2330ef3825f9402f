"""Logistic regression from scratch: weights and bias as leaf tensors with requires_grad, the update done by
hand under torch.no_grad() (`weights -= weights.grad * lr`), then weights.grad.zero_().

source: https://pytorch.org/tutorials/beginner/nn_tutorial.html ("Neural net from scratch (without torch.nn)":
log_softmax, model, nll, the loop over batches kept; 784 -> 10 shrunk to 20 -> 4, random data, 2 epochs of
16 batches).
"""
# %%
import math

import torch

torch.manual_seed(0)
x_train, y_train = torch.randn(64, 20), torch.randint(0, 4, (64,))
n = x_train.shape[0]
weights = torch.randn(20, 4) / math.sqrt(20)
weights.requires_grad_()
bias = torch.zeros(4, requires_grad=True)


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def model(xb):
    return log_softmax(xb @ weights + bias)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


loss_func = nll
bs = 4
lr = 0.5
epochs = 2
# %%
for epoch in range(epochs):
    for i in range((n - 1) // bs + 1):
        start_i = i * bs
        end_i = start_i + bs
        xb = x_train[start_i:end_i]
        yb = y_train[start_i:end_i]
        pred = model(xb)
        loss = loss_func(pred, yb)

        loss.backward()
        with torch.no_grad():
            weights -= weights.grad * lr
            bias -= bias.grad * lr
            weights.grad.zero_()
            bias.grad.zero_()
print(loss_func(model(x_train), y_train).item())
