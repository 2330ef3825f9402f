"""Curriculum learning over sequence length: an LSTM learns to add up a sequence of digits, starting on
length-2 sequences and moving to longer ones as the curriculum advances (Adam, MSE, a fresh batch each step).

source: https://arxiv.org/abs/1410.4615 (Zaremba and Sutskever, "Learning to Execute": the "naive" curriculum
that raises the target length in stages), written as a plain PyTorch LSTM regressor; 4 stages of 8 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class Adder(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out[:, -1]).squeeze(-1)


def make_batch(batch_size, length):
    digits = torch.randint(0, 10, (batch_size, length, 1)).float() / 10
    return digits, digits.sum(dim=(1, 2))


model = Adder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()
curriculum = [2, 3, 5, 8]  # sequence length at each stage
steps_per_stage = 8
# %%
history = []
for stage, length in enumerate(curriculum):
    stage_losses = []
    for step in range(steps_per_stage):
        x, y = make_batch(16, length)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        stage_losses.append(loss.item())
    history.append((length, sum(stage_losses) / len(stage_losses)))
