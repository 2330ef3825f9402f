import torch


def sgd_step(params, lr):
    for p in params:
        with torch.no_grad():
            p -= lr * p.grad