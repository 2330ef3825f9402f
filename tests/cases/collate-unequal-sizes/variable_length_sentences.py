%%gradcheck
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class Reviews(Dataset):
    def __init__(self):
        self.tokens = [torch.randint(1, 100, (5 + 3 * i,)) for i in range(8)]  # one review per item
        self.labels = [i % 2 for i in range(8)]

    def __len__(self):
        return len(self.tokens)

    def __getitem__(self, i):
        return self.tokens[i], self.labels[i]


loader = DataLoader(Reviews(), batch_size=4)
model = nn.EmbeddingBag(100, 2)
for ids, labels in loader:
    loss = nn.functional.cross_entropy(model(ids), labels)
    loss.backward()
