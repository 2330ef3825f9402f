%%gradcheck
# Train a 3-class classifier; the labels came in as floats
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

X = torch.randn(64, 4)
labels = torch.randint(0, 3, (64,)).float()
loader = DataLoader(TensorDataset(X, labels), batch_size=16)
model = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(2):
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb.long())
        loss.backward()
        optimizer.step()
