"""Gradients cleared with model.zero_grad() (not optimizer.zero_grad()) before each backward, the optimizer
only stepping; the model holds all the optimizer's parameters.

source: https://pytorch.org/tutorials/beginner/nlp/sequence_models_tutorial.html (the LSTM tagger's loop:
`model.zero_grad()`, forward, `loss.backward()`, `optimizer.step()`, SGD lr=0.1); LSTMTagger kept, two toy
sentences as random index sequences, 15 epochs x 2 sentences = 30 steps.
"""
# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(1)


class LSTMTagger(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
        super(LSTMTagger, self).__init__()
        self.hidden_dim = hidden_dim
        self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
        # The LSTM takes word embeddings as inputs, and outputs hidden states with dimensionality hidden_dim.
        self.lstm = nn.LSTM(embedding_dim, hidden_dim)
        # The linear layer that maps from hidden state space to tag space
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

    def forward(self, sentence):
        embeds = self.word_embeddings(sentence)
        lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
        tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
        tag_scores = F.log_softmax(tag_space, dim=1)
        return tag_scores


training_data = [(torch.tensor([0, 1, 2, 3, 4]), torch.tensor([0, 1, 2, 0, 1])),
                 (torch.tensor([5, 6, 7, 8]), torch.tensor([1, 2, 0, 1]))]
model = LSTMTagger(6, 6, 9, 3)
loss_function = nn.NLLLoss()
optimizer = optim.SGD(model.parameters(), lr=0.1)
# %%
for epoch in range(15):
    for sentence_in, targets in training_data:
        # Step 1. Remember that Pytorch accumulates gradients.
        # We need to clear them out before each instance
        model.zero_grad()
        # Step 3. Run our forward pass.
        tag_scores = model(sentence_in)
        # Step 4. Compute the loss, gradients, and update the parameters by calling optimizer.step()
        loss = loss_function(tag_scores, targets)
        loss.backward()
        optimizer.step()
