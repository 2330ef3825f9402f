%%gradcheck
# A GRU language model trained on consecutive chunks; the hidden state is handed on between chunks
import torch
import torch.nn as nn


class CharModel(nn.Module):
    def __init__(self, vocab=10, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.gru = nn.GRU(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        out, hidden = self.gru(self.embed(tokens), hidden)
        return self.head(out), hidden


torch.manual_seed(0)
model = CharModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
text = torch.randint(0, 10, (2, 41))
hidden = torch.zeros(1, 2, 16)
for start in range(0, 40, 10):
    chunk, target = text[:, start:start + 10], text[:, start + 1:start + 11]
    logits, hidden = model(chunk, hidden)
    loss = criterion(logits.reshape(-1, 10), target.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
