%%gradcheck
# `plot` comes from an earlier cell (a plotting library that calls np.asarray on its arguments)
import torch

xs = torch.linspace(-1, 1, 20)
w = torch.tensor(2.0, requires_grad=True)
ys = w * xs ** 2
plot(xs, ys.detach())
