"""The current char-RNN name classifier tutorial: nn.RNN over one-hot letters, a minibatch loss accumulated
with `batch_loss += loss` over the names of the batch, clip_grad_norm_(3), SGD step, then zero_grad.

source: https://pytorch.org/tutorials/intermediate/char_rnn_classification_tutorial.html (CharRNN and train()
kept; the names dataset replaced by 48 random letter sequences of 4 labels, batch_size 8, 5 epochs = 30 steps).
"""
# %%
import random
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
n_letters, n_labels = 12, 4


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(CharRNN, self).__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        output = self.softmax(output)
        return output


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letter] = 1
    return tensor


training_data = []
for _ in range(48):
    label = random.randrange(n_labels)
    line = [random.randrange(n_letters) for _ in range(random.randint(2, 7))]
    training_data.append((torch.tensor([label], dtype=torch.long), lineToTensor(line), label, line))

rnn = CharRNN(n_letters, 16, n_labels)
# %%
def train(rnn, training_data, n_epoch=10, n_batch_size=64, report_every=50, learning_rate=0.2,
          criterion=nn.NLLLoss()):
    current_loss = 0
    all_losses = []
    rnn.train()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)

    for iter in range(1, n_epoch + 1):
        rnn.zero_grad()  # clear the gradients

        # create some minibatches; we cannot use dataloaders because each of our names is a different length
        batches = list(range(len(training_data)))
        random.shuffle(batches)
        batches = np.array_split(batches, len(batches) // n_batch_size)

        for idx, batch in enumerate(batches):
            batch_loss = 0
            for i in batch:  # for each example in this batch
                (label_tensor, text_tensor, label, text) = training_data[i]
                output = rnn.forward(text_tensor)
                loss = criterion(output, label_tensor)
                batch_loss += loss

            # optimize parameters
            batch_loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 3)
            optimizer.step()
            optimizer.zero_grad()

            current_loss += batch_loss.item() / len(batch)

        all_losses.append(current_loss / len(batches))
        current_loss = 0

    return all_losses


all_losses = train(rnn, training_data, n_epoch=5, n_batch_size=8, learning_rate=0.15)
