import numpy as np


def plot(xs, ys):
    """Stands in for a plotting library: it turns what it is given into NumPy arrays."""
    return np.asarray(xs), np.asarray(ys)
