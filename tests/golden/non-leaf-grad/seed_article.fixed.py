%%gradcheck
# The article's section-3 example: `w = w + 1` after some computation. The article says this raises "leaf
# variable has been moved into the graph interior"; torch 2.13 raises nothing, and `w.grad` is None afterwards.
# Adapted only by spelling out "...一些计算..." as a forward/backward pass before and after the update.
import torch
w = torch.tensor([1.0], requires_grad=True)
loss = (w * 3).sum()  # ...一些计算...
loss.backward()
with torch.no_grad():
    w += 1  # 这会破坏计算图！
loss = (w * 3).sum()
loss.backward()
print(w.grad)
