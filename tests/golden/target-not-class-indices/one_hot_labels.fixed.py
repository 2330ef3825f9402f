%%gradcheck
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
features = torch.randn(32, 10)
classes = torch.randint(0, 4, (32,))
targets = F.one_hot(classes, num_classes=4)  # one-hot labels, as a Keras tutorial keeps them

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(features), targets.argmax(dim=1))
    loss.backward()
    optimizer.step()
