"""Per-step losses kept as detached tensors (losses.append(loss.detach())) and reduced once at the end of
each epoch with torch.stack(...).mean().item(), avoiding a host sync per step.

source: https://github.com/Lightning-AI/pytorch-lightning (the training_step outputs pattern:
`outputs.append(loss.detach())`, then `torch.stack(outputs).mean()` in on_train_epoch_end), written as a plain
loop; a small MLP, 3 epochs of 10 batches.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(9, 18), nn.ReLU(), nn.Linear(18, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loader = [(torch.randn(6, 9), torch.randint(0, 2, (6,))) for _ in range(10)]
# %%
epoch_means = []
for epoch in range(3):
    outputs = []
    for x, y in loader:
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        outputs.append(loss.detach())
    epoch_means.append(torch.stack(outputs).mean().item())
print(epoch_means[-1])
