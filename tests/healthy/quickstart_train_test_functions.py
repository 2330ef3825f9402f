"""The quickstart's train(dataloader, model, loss_fn, optimizer) and test(...) functions defined in an earlier
cell, called per epoch from the last one.

source: https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html (NeuralNetwork, train, test and
the `for t in range(epochs)` loop kept; FashionMNIST replaced by random 1x8x8 images, 512-wide layers shrunk to
32, 4 epochs of 8 batches).
"""
# %%
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
device = "cpu"
training_data = TensorDataset(torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,)))
test_data = TensorDataset(torch.randn(32, 1, 8, 8), torch.randint(0, 10, (32,)))
batch_size = 8
train_dataloader = DataLoader(training_data, batch_size=batch_size)
test_dataloader = DataLoader(test_data, batch_size=batch_size)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(8 * 8, 32),
            nn.ReLU(),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        # Compute prediction error
        pred = model(X)
        loss = loss_fn(pred, y)
        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    return test_loss, correct
# %%
epochs = 4
for t in range(epochs):
    train(train_dataloader, model, loss_fn, optimizer)
    test_loss, correct = test(test_dataloader, model, loss_fn)
print(test_loss)
