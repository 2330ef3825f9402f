"""A bidirectional LSTM acoustic model trained with nn.CTCLoss: log_softmax over (T, N, C), per-sample
input_lengths and target_lengths, blank = 0, Adam and clip_grad_norm_.

source: https://pytorch.org/docs/stable/generated/torch.nn.CTCLoss.html (the "target are to be padded" example,
with a BiLSTM producing the log-probabilities instead of random ones); 20 random feature sequences in 4 batches,
8 epochs = 32 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)
T, C, F_in, S = 20, 8, 6, 5  # input length, classes (blank = 0), features, max target length


class BiLSTMCTC(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(F_in, 12, bidirectional=True)
        self.fc = nn.Linear(24, C)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out).log_softmax(2)


batches = []
for _ in range(4):
    N = 5
    x = torch.randn(T, N, F_in)
    target = torch.randint(low=1, high=C, size=(N, S), dtype=torch.long)
    input_lengths = torch.randint(low=T - 6, high=T + 1, size=(N,), dtype=torch.long)
    target_lengths = torch.randint(low=1, high=S + 1, size=(N,), dtype=torch.long)
    batches.append((x, target, input_lengths, target_lengths))

model = BiLSTMCTC()
ctc_loss = nn.CTCLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
# %%
epoch_losses = []
for epoch in range(8):
    running = 0.0
    for x, target, input_lengths, target_lengths in batches:
        optimizer.zero_grad()
        log_probs = model(x)
        loss = ctc_loss(log_probs, target, input_lengths, target_lengths)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        running += loss.item()
    epoch_losses.append(running / len(batches))
