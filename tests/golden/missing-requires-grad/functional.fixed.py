%%gradcheck
# Fitting a quadratic with plain tensor code; torch imported under another name
import torch as T
import torch.nn.functional as F

T.manual_seed(0)
xs = T.linspace(-1, 1, 50)
ys = T.sin(xs)
coef = T.randn(3, requires_grad=True)
pred = coef[0] + coef[1] * xs + coef[2] * xs ** 2
loss = F.mse_loss(pred, ys)
loss.backward()
print(coef.grad)
