%%gradcheck
# A bigram model in plain tensors: the embedding lookup is done once, before the training loop
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(0)
xs = torch.randint(0, 27, (50,), generator=g)
ys = torch.randint(0, 27, (50,), generator=g)
C = torch.randn(27, 4, generator=g, requires_grad=True)
W = torch.randn(4, 27, generator=g, requires_grad=True)
for step in range(10):
    emb = C[xs]
    logits = emb @ W
    loss = F.cross_entropy(logits, ys)
    for p in (C, W):
        p.grad = None
    loss.backward()
    for p in (C, W):
        p.data += -0.1 * p.grad
