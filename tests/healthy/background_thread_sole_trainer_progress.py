"""Training in a background thread so the notebook stays responsive: the cell starts a threading.Thread that
runs the whole training loop and writes its progress (step, last loss) into a shared dict; the main thread only
polls that dict until the thread is done. Nothing else trains meanwhile.

source: https://ipywidgets.readthedocs.io/en/latest/examples/Widget%20Asynchronous.html (the "updating a widget
in the background" pattern: work in a threading.Thread, the notebook reading its progress) with the training
loop of https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html; random data, 30 steps.
"""
# %%
import threading
import time

import torch
from torch import nn

torch.manual_seed(0)


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                               nn.Linear(32, 4))

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


X, Y = torch.randn(120, 4, 4), torch.randint(0, 4, (120,))
train_dataloader = torch.utils.data.DataLoader(list(zip(X, Y)), batch_size=12, shuffle=True)
model = NeuralNetwork()
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
progress = {"step": 0, "loss": None, "done": False}


def train_loop(dataloader, model, loss_fn, optimizer):
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        progress["step"] += 1
        progress["loss"] = loss.item()


def work(epochs):
    for t in range(epochs):
        train_loop(train_dataloader, model, loss_fn, optimizer)
    progress["done"] = True
# %%
thread = threading.Thread(target=work, args=(3,))
thread.start()
seen = []
while not progress["done"]:
    seen.append(progress["step"])
    time.sleep(0.01)
thread.join()
