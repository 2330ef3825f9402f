%%gradcheck
# The article's section-4 example as written: `a` is a leaf that requires grad, so in torch 2.13 `a.add_(1)`
# raises the leaf error (not the saved-tensor error the article shows)
import torch
a = torch.tensor([1.0], requires_grad=True)
b = torch.tensor([2.0], requires_grad=True)
c = a * b
a.add_(1)  # inplace操作！
c.backward()  # 报错！
