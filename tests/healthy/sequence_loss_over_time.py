"""A seq2seq decoder loop: the loss summed over time steps, then divided by the length before backward().

source: https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html (the classic `train`
function: `loss += criterion(decoder_output, target_tensor[di])` ... `loss.backward()` ...
`loss.item() / target_length`), with a GRU cell, random tokens, 25 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
V, H, T = 12, 16, 6
embed = nn.Embedding(V, H)
cell = nn.GRUCell(H, H)
out = nn.Linear(H, V)
params = list(embed.parameters()) + list(cell.parameters()) + list(out.parameters())
optimizer = torch.optim.SGD(params, lr=0.05)
criterion = nn.CrossEntropyLoss()
# %%
for it in range(25):
    tokens = torch.randint(0, V, (4, T + 1))
    optimizer.zero_grad()
    h = torch.zeros(4, H)
    seq_loss = 0
    for t in range(T):
        h = cell(embed(tokens[:, t]), h)
        seq_loss = seq_loss + criterion(out(h), tokens[:, t + 1])
    (seq_loss / T).backward()
    optimizer.step()
