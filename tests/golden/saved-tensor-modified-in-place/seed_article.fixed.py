%%gradcheck
# The article's section-4 example, adapted: there `a` is a leaf, and `a.add_(1)` on a leaf that requires
# grad raises the *leaf* error in torch 2.13. Here `a` is made a non-leaf intermediate (`* 1`), so the
# in-place add changes a tensor that `c = a * b` saved, which is the error the article describes.
import torch
a = torch.tensor([1.0], requires_grad=True) * 1
b = torch.tensor([2.0], requires_grad=True)
c = a * b
a = a.add(1)  # inplace操作！
c.backward()  # 报错！
