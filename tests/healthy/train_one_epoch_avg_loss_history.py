"""The "Training with PyTorch" tutorial loop: train_one_epoch() accumulating running_loss with loss.item()
and reporting last_loss every few batches, a per-epoch validation pass in eval() under torch.no_grad(), the
best validation loss tracked, and an epoch-level list of float losses.

source: https://pytorch.org/tutorials/beginner/introyt/trainingyt.html (train_one_epoch and the per-epoch
loop kept; TensorBoard writer and torch.save dropped, the epoch losses kept in a list instead; FashionMNIST
replaced by random 1x8x8 images, GarmentClassifier shrunk, 5 epochs of 6 batches = 30 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GarmentClassifier(nn.Module):
    def __init__(self):
        super(GarmentClassifier, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc1 = nn.Linear(4 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = x.view(-1, 4 * 3 * 3)
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        return x


X, Y = torch.randn(72, 1, 8, 8), torch.randint(0, 10, (72,))
training_loader = torch.utils.data.DataLoader(list(zip(X[:48], Y[:48])), batch_size=8, shuffle=True)
validation_loader = torch.utils.data.DataLoader(list(zip(X[48:], Y[48:])), batch_size=8, shuffle=False)
model = GarmentClassifier()
loss_fn = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
# %%
def train_one_epoch(epoch_index):
    running_loss = 0.
    last_loss = 0.

    # Here, we use enumerate(training_loader) instead of iter(training_loader) so that we can track the batch
    # index and do some intra-epoch reporting
    for i, data in enumerate(training_loader):
        # Every data instance is an input + label pair
        inputs, labels = data

        # Zero your gradients for every batch!
        optimizer.zero_grad()

        # Make predictions for this batch
        outputs = model(inputs)

        # Compute the loss and its gradients
        loss = loss_fn(outputs, labels)
        loss.backward()

        # Adjust learning weights
        optimizer.step()

        # Gather data and report
        running_loss += loss.item()
        if i % 3 == 2:
            last_loss = running_loss / 3  # loss per batch
            running_loss = 0.

    return last_loss


epoch_number = 0
EPOCHS = 5
best_vloss = 1_000_000.
train_losses, val_losses = [], []

for epoch in range(EPOCHS):
    # Make sure gradient tracking is on, and do a pass over the data
    model.train(True)
    avg_loss = train_one_epoch(epoch_number)

    running_vloss = 0.0
    # Set the model to evaluation mode, disabling dropout and using population statistics for batch
    # normalization.
    model.eval()

    # Disable gradient computation and reduce memory consumption.
    with torch.no_grad():
        for i, vdata in enumerate(validation_loader):
            vinputs, vlabels = vdata
            voutputs = model(vinputs)
            vloss = loss_fn(voutputs, vlabels)
            running_vloss += vloss

    avg_vloss = running_vloss / (i + 1)
    train_losses.append(avg_loss)
    val_losses.append(float(avg_vloss))

    # Track best performance
    if avg_vloss < best_vloss:
        best_vloss = avg_vloss

    epoch_number += 1
