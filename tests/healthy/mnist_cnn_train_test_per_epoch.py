"""The pytorch/examples MNIST loop: a small CNN, train() and test() functions, model.eval() and torch.no_grad()
for the test pass each epoch, Adadelta with StepLR(gamma=0.7) stepped once per epoch.

source: https://github.com/pytorch/examples/blob/main/mnist/main.py (Net, train, test and the epoch loop kept;
MNIST replaced by 48 random 1x12x12 images in batches of 8, channels shrunk, 4 epochs = 24 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    return test_loss, correct


device = torch.device("cpu")
train_set = TensorDataset(torch.randn(48, 1, 12, 12), torch.randint(0, 10, (48,)))
test_set = TensorDataset(torch.randn(16, 1, 12, 12), torch.randint(0, 10, (16,)))
train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
test_loader = DataLoader(test_set, batch_size=16)
model = Net().to(device)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
# %%
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 5):
    train(model, device, train_loader, optimizer, epoch)
    test_loss, correct = test(model, device, test_loader)
    scheduler.step()
print(test_loss)
