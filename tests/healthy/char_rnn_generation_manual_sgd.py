"""The char-RNN name generator of the PyTorch tutorial: category + letter + hidden concatenated, loss summed
over the letters into `loss = torch.Tensor([0])` with `+=`, then a hand-written SGD step on p.data.

source: https://pytorch.org/tutorials/intermediate/char_rnn_generation_tutorial.html (RNN, train() and the
all_losses bookkeeping kept; the names replaced by random letter sequences of 3 categories, 30 iterations).
"""
# %%
import random
import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)
n_letters, n_categories = 10, 3  # the last letter is EOS


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.i2o(input_combined)
        output_combined = torch.cat((hidden, output), 1)
        output = self.o2o(output_combined)
        output = self.dropout(output)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def randomTrainingExample():
    category = random.randrange(n_categories)
    line = [random.randrange(n_letters - 1) for _ in range(random.randint(3, 6))]
    category_tensor = torch.zeros(1, n_categories)
    category_tensor[0][category] = 1
    input_line_tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        input_line_tensor[li][0][letter] = 1
    target_line_tensor = torch.LongTensor(line[1:] + [n_letters - 1])
    return category_tensor, input_line_tensor, target_line_tensor


rnn = RNN(n_letters, 32, n_letters)
criterion = nn.NLLLoss()
learning_rate = 0.0005
# %%
def train(category_tensor, input_line_tensor, target_line_tensor):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()

    rnn.zero_grad()

    loss = torch.Tensor([0])  # you can also just simply use ``loss = 0``

    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        l = criterion(output, target_line_tensor[i])
        loss += l

    loss.backward()

    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item() / input_line_tensor.size(0)


n_iters, plot_every = 30, 5
all_losses = []
total_loss = 0
for iter in range(1, n_iters + 1):
    output, loss = train(*randomTrainingExample())
    total_loss += loss
    if iter % plot_every == 0:
        all_losses.append(total_loss / plot_every)
        total_loss = 0
