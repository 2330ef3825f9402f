import torch


def sgd_step(params, lr):
    for p in params:
        p -= lr * p.grad
