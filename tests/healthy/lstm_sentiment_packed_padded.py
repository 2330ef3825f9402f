"""bentrevett's "Upgraded Sentiment Analysis": a bidirectional 2-layer LSTM over pack_padded_sequence'd
embeddings (padding_idx, <unk>/<pad> rows zeroed by hand), BCEWithLogitsLoss, Adam, epoch_loss / epoch_acc.

source: https://github.com/bentrevett/pytorch-sentiment-analysis/blob/master/legacy/2%20-%20Upgraded%20Sentiment%20Analysis.ipynb
(RNN, binary_accuracy and train() kept; torchtext's IMDB iterator replaced by 5 batches of 6 random padded token
sequences with sorted lengths up to 6, 4 epochs = 20 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(1234)


class RNN(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, output_dim, n_layers,
                 bidirectional, dropout, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
                           bidirectional=bidirectional, dropout=dropout)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text, text_lengths):
        # text = [sent len, batch size]
        embedded = self.dropout(self.embedding(text))
        # pack sequence; lengths need to be on CPU!
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to('cpu'))
        packed_output, (hidden, cell) = self.rnn(packed_embedded)
        # unpack sequence
        output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)


INPUT_DIM, EMBEDDING_DIM, HIDDEN_DIM = 30, 8, 8
UNK_IDX, PAD_IDX = 0, 1
model = RNN(INPUT_DIM, EMBEDDING_DIM, HIDDEN_DIM, 1, 2, True, 0.5, PAD_IDX)
model.embedding.weight.data[UNK_IDX] = torch.zeros(EMBEDDING_DIM)
model.embedding.weight.data[PAD_IDX] = torch.zeros(EMBEDDING_DIM)

optimizer = optim.Adam(model.parameters())
criterion = nn.BCEWithLogitsLoss()


class Batch:
    def __init__(self, n, max_len):
        lengths = torch.sort(torch.randint(2, max_len + 1, (n,)), descending=True).values
        text = torch.full((max_len, n), PAD_IDX)
        for j, length in enumerate(lengths):
            text[:length, j] = torch.randint(2, INPUT_DIM, (int(length),))
        self.text = (text, lengths)
        self.label = torch.randint(0, 2, (n,)).float()


train_iterator = [Batch(6, 6) for _ in range(5)]


def binary_accuracy(preds, y):
    rounded_preds = torch.round(torch.sigmoid(preds))
    correct = (rounded_preds == y).float()
    acc = correct.sum() / len(correct)
    return acc
# %%
def train(model, iterator, optimizer, criterion):
    epoch_loss = 0
    epoch_acc = 0
    model.train()
    for batch in iterator:
        text, text_lengths = batch.text
        optimizer.zero_grad()
        predictions = model(text, text_lengths).squeeze(1)
        loss = criterion(predictions, batch.label)
        acc = binary_accuracy(predictions, batch.label)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        epoch_acc += acc.item()
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


N_EPOCHS = 4
for epoch in range(N_EPOCHS):
    train_loss, train_acc = train(model, train_iterator, optimizer, criterion)
