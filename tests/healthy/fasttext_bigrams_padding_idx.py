"""bentrevett's FastText sentiment model: bigrams appended to each sentence, nn.Embedding with padding_idx
(its <unk>/<pad> rows zeroed after copying "pretrained" vectors), avg_pool2d over the sentence, Adam,
BCEWithLogitsLoss.

source: https://github.com/bentrevett/pytorch-sentiment-analysis/blob/master/legacy/3%20-%20Faster%20Sentiment%20Analysis.ipynb
(generate_bigrams, FastText, binary_accuracy and train() kept; IMDB and GloVe replaced by random token ids
and random vectors, 6 batches, 5 epochs = 30 steps).
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1234)


def generate_bigrams(x):
    n_grams = set(zip(*[x[i:] for i in range(2)]))
    for n_gram in n_grams:
        x.append(' '.join(n_gram))
    return x


class FastText(nn.Module):
    def __init__(self, vocab_size, embedding_dim, output_dim, pad_idx):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.fc = nn.Linear(embedding_dim, output_dim)

    def forward(self, text):
        # text = [sent len, batch size]
        embedded = self.embedding(text)
        embedded = embedded.permute(1, 0, 2)
        pooled = F.avg_pool2d(embedded, (embedded.shape[1], 1)).squeeze(1)
        return self.fc(pooled)


# a tiny "vocabulary" built from random sentences and their bigrams
words = [f"w{i}" for i in range(12)]
itos = ["<unk>", "<pad>"]
sentences = []
for _ in range(36):
    sent = generate_bigrams([words[int(i)] for i in torch.randint(0, 12, (int(torch.randint(2, 7, ())),))])
    sentences.append(sent)
    itos += [t for t in sent if t not in itos]
stoi = {t: i for i, t in enumerate(itos)}
UNK_IDX, PAD_IDX = stoi["<unk>"], stoi["<pad>"]
INPUT_DIM, EMBEDDING_DIM = len(itos), 10


class Batch:
    def __init__(self, sents):
        max_len = max(len(s) for s in sents)
        self.text = torch.tensor([[stoi[s[i]] if i < len(s) else PAD_IDX for s in sents] for i in range(max_len)])
        self.label = torch.tensor([float(len(s) > 8) for s in sents])


train_iterator = [Batch(sentences[i:i + 6]) for i in range(0, 36, 6)]
model = FastText(INPUT_DIM, EMBEDDING_DIM, 1, PAD_IDX)
pretrained_embeddings = torch.randn(INPUT_DIM, EMBEDDING_DIM)
model.embedding.weight.data.copy_(pretrained_embeddings)
model.embedding.weight.data[UNK_IDX] = torch.zeros(EMBEDDING_DIM)
model.embedding.weight.data[PAD_IDX] = torch.zeros(EMBEDDING_DIM)
optimizer = optim.Adam(model.parameters())
criterion = nn.BCEWithLogitsLoss()


def binary_accuracy(preds, y):
    rounded_preds = torch.round(torch.sigmoid(preds))
    correct = (rounded_preds == y).float()
    return correct.sum() / len(correct)
# %%
def train(model, iterator, optimizer, criterion):
    epoch_loss = 0
    epoch_acc = 0
    model.train()
    for batch in iterator:
        optimizer.zero_grad()
        predictions = model(batch.text).squeeze(1)
        loss = criterion(predictions, batch.label)
        acc = binary_accuracy(predictions, batch.label)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        epoch_acc += acc.item()
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


for epoch in range(5):
    train_loss, train_acc = train(model, train_iterator, optimizer, criterion)
