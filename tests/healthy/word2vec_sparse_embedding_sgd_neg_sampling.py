"""word2vec skip-gram with negative sampling on sparse embeddings: two nn.Embedding(sparse=True) tables (the
context table initialised to zeros through `.weight.data.uniform_(-0, 0)`), a summed (not averaged)
-logsigmoid loss over positive pairs and unigram^0.75 negatives, plain SGD stepping the sparse gradients, and
the learning rate decayed linearly by writing into optimizer.param_groups.

source: https://github.com/Adoni/word2vec_pytorch (model.py SkipGramModel and word2vec.py Word2Vec.train of
the optim.SGD revision, input_data.py InputData.get_batch_pairs / init_sample_table /
get_neg_v_neg_sampling); the corpus file replaced by 200 synthetic sentences over 40 words in 4 topics, a
1e5-entry sample table, `Variable(...)` by plain tensors and `loss.data[0]` by `loss.item()`, the lr decayed
every 10 batches, initial lr 0.1, batch 50, 40 batches.
"""
# %%
from collections import deque

import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

numpy.random.seed(12345)
torch.manual_seed(0)


class SkipGramModel(nn.Module):
    """Skip gram model of word2vec."""

    def __init__(self, emb_size, emb_dimension):
        super(SkipGramModel, self).__init__()
        self.emb_size = emb_size
        self.emb_dimension = emb_dimension
        self.u_embeddings = nn.Embedding(emb_size, emb_dimension, sparse=True)
        self.v_embeddings = nn.Embedding(emb_size, emb_dimension, sparse=True)
        self.init_emb()

    def init_emb(self):
        initrange = 0.5 / self.emb_dimension
        self.u_embeddings.weight.data.uniform_(-initrange, initrange)
        self.v_embeddings.weight.data.uniform_(-0, 0)

    def forward(self, pos_u, pos_v, neg_v):
        emb_u = self.u_embeddings(pos_u)
        emb_v = self.v_embeddings(pos_v)
        score = torch.mul(emb_u, emb_v).squeeze()
        score = torch.sum(score, dim=1)
        score = F.logsigmoid(score)
        neg_emb_v = self.v_embeddings(neg_v)
        neg_score = torch.bmm(neg_emb_v, emb_u.unsqueeze(2)).squeeze()
        neg_score = torch.sum(neg_score, dim=1)
        neg_score = F.logsigmoid(-1 * neg_score)
        return -1 * (torch.sum(score) + torch.sum(neg_score))


class InputData:
    """Word map, sampling table and pair cache, over an in-memory list of sentences."""

    def __init__(self, sentences, min_count):
        self.sentences = sentences
        self.next_sentence = 0
        self.get_words(min_count)
        self.word_pair_catch = deque()
        self.init_sample_table()

    def get_words(self, min_count):
        word_frequency = dict()
        for line in self.sentences:
            for w in line.strip().split(' '):
                word_frequency[w] = word_frequency.get(w, 0) + 1
        self.word2id, self.id2word, self.word_frequency = dict(), dict(), dict()
        wid = 0
        for w, c in word_frequency.items():
            if c < min_count:
                continue
            self.word2id[w] = wid
            self.id2word[wid] = w
            self.word_frequency[wid] = c
            wid += 1
        self.word_count = len(self.word2id)

    def init_sample_table(self):
        self.sample_table = []
        sample_table_size = 1e5
        pow_frequency = numpy.array(list(self.word_frequency.values())) ** 0.75
        words_pow = sum(pow_frequency)
        ratio = pow_frequency / words_pow
        count = numpy.round(ratio * sample_table_size)
        for wid, c in enumerate(count):
            self.sample_table += [wid] * int(c)
        self.sample_table = numpy.array(self.sample_table)

    def get_batch_pairs(self, batch_size, window_size):
        while len(self.word_pair_catch) < batch_size:
            sentence = self.sentences[self.next_sentence % len(self.sentences)]
            self.next_sentence += 1
            word_ids = [self.word2id[w] for w in sentence.strip().split(' ') if w in self.word2id]
            for i, u in enumerate(word_ids):
                for j, v in enumerate(word_ids[max(i - window_size, 0):i + window_size]):
                    if u == v:
                        continue
                    self.word_pair_catch.append((u, v))
        batch_pairs = []
        for _ in range(batch_size):
            batch_pairs.append(self.word_pair_catch.popleft())
        return batch_pairs

    def get_neg_v_neg_sampling(self, pos_word_pair, count):
        neg_v = numpy.random.choice(self.sample_table, size=(len(pos_word_pair), count)).tolist()
        return neg_v


topics = [[f"t{t}w{k}" for k in range(10)] for t in range(4)]
sentences = [' '.join(numpy.random.choice(topics[s % 4], size=8)) for s in range(200)]
data = InputData(sentences, min_count=1)
batch_size, window_size, initial_lr, batch_count = 50, 3, 0.1, 40
skip_gram_model = SkipGramModel(data.word_count, 16)
optimizer = optim.SGD(skip_gram_model.parameters(), lr=initial_lr)
# %%
for i in range(batch_count):
    pos_pairs = data.get_batch_pairs(batch_size, window_size)
    neg_v = data.get_neg_v_neg_sampling(pos_pairs, 5)
    pos_u = [pair[0] for pair in pos_pairs]
    pos_v = [pair[1] for pair in pos_pairs]

    pos_u = torch.LongTensor(pos_u)
    pos_v = torch.LongTensor(pos_v)
    neg_v = torch.LongTensor(neg_v)

    optimizer.zero_grad()
    loss = skip_gram_model.forward(pos_u, pos_v, neg_v)
    loss.backward()
    optimizer.step()

    description = "Loss: %0.8f, lr: %0.6f" % (loss.item(), optimizer.param_groups[0]['lr'])
    if i % 10 == 0:
        lr = initial_lr * (1.0 - 1.0 * i / batch_count)
        for param_group in optimizer.param_groups:
            param_group['lr'] = lr
