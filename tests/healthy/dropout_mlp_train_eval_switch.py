"""An MLP with dropout, switched to eval mode for a validation pass every 5 steps and back to train mode.

source: https://d2l.ai/chapter_multilayer-perceptrons/dropout.html (the concise dropout MLP: Linear-ReLU-
Dropout twice) with the train()/eval() switching of https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html;
random 20-feature data, 30 steps.
"""
# %%
import torch
from torch import nn

torch.manual_seed(0)
dropout1, dropout2 = 0.2, 0.5
net = nn.Sequential(nn.Flatten(),
                    nn.Linear(20, 32), nn.ReLU(), nn.Dropout(dropout1),
                    nn.Linear(32, 32), nn.ReLU(), nn.Dropout(dropout2),
                    nn.Linear(32, 4))
loss = nn.CrossEntropyLoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.5)
X, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
X_val, y_val = torch.randn(16, 20), torch.randint(0, 4, (16,))
# %%
val_losses = []
for step in range(30):
    net.train()
    i = (step * 16) % 64
    l = loss(net(X[i:i + 16]), y[i:i + 16])
    trainer.zero_grad()
    l.backward()
    trainer.step()
    if step % 5 == 4:
        net.eval()
        with torch.no_grad():
            val_losses.append(loss(net(X_val), y_val).item())
print(val_losses[-1])
