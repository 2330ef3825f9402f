%%gradcheck
import torch
import torch.nn.functional as F

torch.manual_seed(0)
n_tags = 5
emb = torch.randn(100, 16, requires_grad=True)
proj = torch.randn(16, n_tags, requires_grad=True)
words = torch.randint(0, 100, (4, 7))
tags = torch.randint(0, n_tags, (4, 7))

for step in range(3):
    scores = emb[words] @ proj  # (4, 7, n_tags)
    loss = F.cross_entropy(scores, tags.view(-1))
    loss.backward()
    with torch.no_grad():
        for p in (emb, proj):
            p -= 0.1 * p.grad
            p.grad.zero_()
