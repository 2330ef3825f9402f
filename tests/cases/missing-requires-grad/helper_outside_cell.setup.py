import torch


def fit_step(w, x):
    loss = (x @ w).pow(2).mean()
    loss.backward()
    return loss
