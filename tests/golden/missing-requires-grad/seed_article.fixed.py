%%gradcheck
# The article's section-1 example, adapted: as written `x` has requires_grad=True, so `y = w * x` requires grad
# and backward() succeeds. Here neither tensor requires grad, which is the failure the article describes.
import torch
w = torch.tensor([1.0], requires_grad=True)
x = torch.tensor([2.0], requires_grad=True)
y = w * x
loss = y.sum()
loss.backward()  # 这里会报错
