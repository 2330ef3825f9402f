"""An LSTM sequence classifier trained with clip_grad_norm_ between backward() and step().

source: https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html and the clipping line of
https://github.com/pytorch/examples/blob/main/word_language_model/main.py (`torch.nn.utils.clip_grad_norm_(
model.parameters(), args.clip)`); an LSTM over random sequences of length 6, 30 Adam steps, max_norm=0.25.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class LSTMClassifier(nn.Module):
    def __init__(self, n_in=3, n_hidden=12, n_classes=2):
        super().__init__()
        self.lstm = nn.LSTM(n_in, n_hidden, batch_first=True)
        self.out = nn.Linear(n_hidden, n_classes)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.out(h[-1])


model = LSTMClassifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
clip = 0.25
X, Y = torch.randn(40, 6, 3), torch.randint(0, 2, (40,))
# %%
for step in range(30):
    i = (step * 10) % 40
    optimizer.zero_grad()
    loss = criterion(model(X[i:i + 10]), Y[i:i + 10])
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
