%%gradcheck
# torch imported under another name; the update runs right after backward()
import torch as th

weights = th.ones(5, requires_grad=True)
signal = th.linspace(0, 1, 5)
for _ in range(3):
    score = (weights * signal).sum()
    score.backward()
    weights.sub_(0.1 * weights.grad)
    weights.grad = None
