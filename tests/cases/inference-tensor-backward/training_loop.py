%%gradcheck
# A linear probe trained on embeddings precomputed under inference_mode
import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU()).eval()
probe = nn.Linear(16, 2)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
images, labels = torch.randn(32, 8), torch.randint(0, 2, (32,))

with torch.inference_mode():
    embeddings = backbone(images)

for epoch in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(probe(embeddings), labels)
    loss.backward()
    optimizer.step()
