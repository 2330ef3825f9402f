"""Multi-task learning with learnt homoscedastic uncertainty (Kendall et al.): two regression heads on a shared
trunk, a learnable log-variance per task (nn.Parameter), and a criterion that loops over the tasks adding
`precision * diff + log_var`, so the task weights are trained along with the network.

source: https://github.com/yaringal/multi-task-learning-example/blob/master/multi-task-learning-example-pytorch.ipynb
(gen_data, TrainModel, criterion and the epoch loop kept; N = 100 at 64, nb_features 1024 at 16, batch 16,
8 epochs of 4 batches = 32 steps).
"""
# %%
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

np.random.seed(0)
torch.manual_seed(0)
N, nb_epoch, batch_size, nb_features = 64, 8, 16, 16
Q, D1, D2 = 1, 1, 1


def gen_data(N):
    X = np.random.randn(N, Q)
    w1, b1 = 2., 8.
    sigma1 = 1e1  # ground truth
    Y1 = X.dot(w1) + b1 + sigma1 * np.random.randn(N, D1)
    w2, b2 = 3, 3.
    sigma2 = 1e0  # ground truth
    Y2 = X.dot(w2) + b2 + sigma2 * np.random.randn(N, D2)
    return X, Y1, Y2


class TrainModel(nn.Module):
    def __init__(self, input_size, output1_size, output2_size, nb_features):
        super(TrainModel, self).__init__()
        self.net = nn.Sequential(nn.Linear(input_size, nb_features), nn.ReLU())
        self.linear1 = nn.Linear(nb_features, output1_size)
        self.linear2 = nn.Linear(nb_features, output2_size)
        self.log_var1 = nn.Parameter(torch.zeros(1))
        self.log_var2 = nn.Parameter(torch.zeros(1))

    def forward(self, input):
        feature = self.net(input)
        y1 = self.linear1(feature)
        y2 = self.linear2(feature)
        return [y1, y2], [self.log_var1, self.log_var2]


def criterion(y_pred, y_true, log_vars):
    loss = 0
    for i in range(len(y_pred)):
        precision = torch.exp(-log_vars[i])
        diff = (y_pred[i] - y_true[i]) ** 2.
        loss += torch.sum(precision * diff + log_vars[i], -1)
    return torch.mean(loss)


X, Y1, Y2 = gen_data(N)
model = TrainModel(Q, D1, D2, nb_features)
optimizer = optim.Adam(model.parameters())
# %%
loss_history = np.zeros(nb_epoch)
for i in range(nb_epoch):
    epoch_loss = 0
    for j in range(N // batch_size):
        optimizer.zero_grad()
        inp = torch.from_numpy(X[(j * batch_size):((j + 1) * batch_size)]).float()
        target1 = torch.from_numpy(Y1[(j * batch_size):((j + 1) * batch_size)]).float()
        target2 = torch.from_numpy(Y2[(j * batch_size):((j + 1) * batch_size)]).float()
        out = model(inp)
        loss = criterion(out[0], [target1, target2], out[1])
        epoch_loss += loss.item()
        loss.backward()
        optimizer.step()
    loss_history[i] = epoch_loss * batch_size / N
