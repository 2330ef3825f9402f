%%gradcheck
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, seq_len = 50, 12
model = nn.Sequential(nn.Embedding(vocab, 32), nn.Linear(32, vocab))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
tokens = torch.randint(0, vocab, (64, seq_len + 1))

for step in range(5):
    batch = tokens[step * 8:(step + 1) * 8]
    inputs, targets = batch[:, :-1], batch[:, 1:]
    logits = model(inputs)  # (batch, seq_len, vocab)
    loss = criterion(logits.view(-1, vocab), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
