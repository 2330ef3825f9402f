%%gradcheck
# The article's section-1 note "整数类型的张量不能设置requires_grad=True", on its own example: the weight
# written as an integer literal (the article writes no code for this case).
import torch
w = torch.tensor([1], dtype=torch.float32, requires_grad=True)
x = torch.tensor([2.0], requires_grad=True)
y = w * x
loss = y.sum()
loss.backward()
