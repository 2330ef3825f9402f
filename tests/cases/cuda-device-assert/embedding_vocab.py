%%gradcheck
import torch
import torch.nn as nn
import torch.nn.functional as F

# NB: no GPU here: the runtime's message is raised by hand where the embedding kernel's index check would stop
# it: the tokenizer's vocabulary (120 ids) is larger than the embedding table (100 rows).
ASSERT = ("CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some "
          "other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
          "CUDA_LAUNCH_BLOCKING=1.")


class TextClassifier(nn.Module):
    def __init__(self, vocab=100, dim=16, classes=4):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.out(self.emb(tokens).mean(dim=1))


torch.manual_seed(0)
model = TextClassifier()
tokens = torch.randint(0, 120, (8, 12))
targets = torch.randint(0, 4, (8,))
if int(tokens.max()) >= model.emb.num_embeddings:
    raise RuntimeError(ASSERT)
loss = F.cross_entropy(model(tokens), targets)
loss.backward()
