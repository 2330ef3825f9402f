import torch


def normalise_(t):
    t -= t.mean()
    return t
