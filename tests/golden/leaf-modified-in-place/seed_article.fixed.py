%%gradcheck
# The article's section-3 example, adapted: its `w = w + 1` raises nothing in torch 2.13 (it rebinds `w`; see
# non-leaf-grad/seed_article.py). The error of that section comes from changing the leaf itself, `w += 1`,
# outside the `with torch.no_grad():` the article recommends.
import torch
w = torch.tensor([1.0], requires_grad=True)
loss = (w * 2).sum()  # ...一些计算...
loss.backward()
with torch.no_grad():
    w += 1
