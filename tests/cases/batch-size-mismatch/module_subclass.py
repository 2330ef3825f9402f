%%gradcheck
import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 4 * 4, 120)  # worked out for 28x28 inputs
        self.fc2 = nn.Linear(120, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, 16 * 4 * 4)
        return self.fc2(F.relu(self.fc1(x)))


net = LeNet()
images, labels = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
loss = F.cross_entropy(net(images), labels)
loss.backward()
