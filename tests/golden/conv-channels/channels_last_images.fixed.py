%%gradcheck
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
# images as PIL / NumPy give them: (N, H, W, C)
pixels = np.random.rand(8, 32, 32, 3).astype(np.float32)
images = torch.from_numpy(pixels)
labels = torch.randint(0, 10, (8,))

model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                      nn.Linear(16, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images.permute(0, 3, 1, 2)), labels)
    loss.backward()
    optimizer.step()
