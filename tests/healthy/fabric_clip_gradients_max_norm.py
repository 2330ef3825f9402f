"""Lightning Fabric with gradient clipping: fabric.backward(loss), then fabric.clip_gradients(model, optimizer,
max_norm=2.0) before optimizer.step(), on a small GRU language model.

source: https://lightning.ai/docs/fabric/stable/api/fabric_methods.html (clip_gradients: "Fabric can clip
gradients by value or by norm", `fabric.backward(loss)`, `fabric.clip_gradients(model, optimizer,
max_norm=2.0)`, `optimizer.step()`); a GRU next-token model on synthetic sequences, Fabric on CPU, 25 steps.
"""
# %%
import lightning as L
import torch
from torch import nn

torch.manual_seed(0)


class TinyGRULM(nn.Module):
    def __init__(self, vocab=30, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        h, _ = self.rnn(self.embed(tokens))
        return self.out(h)


fabric = L.Fabric(accelerator="cpu", devices=1)
model = TinyGRULM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model, optimizer = fabric.setup(model, optimizer)
sequences = [torch.randint(0, 30, (8, 13)) for _ in range(25)]
# %%
model.train()
for seq in sequences:
    inputs, targets = seq[:, :-1], seq[:, 1:]
    optimizer.zero_grad()
    logits = model(inputs)
    loss = nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
    fabric.backward(loss)
    fabric.clip_gradients(model, optimizer, max_norm=2.0)
    optimizer.step()
