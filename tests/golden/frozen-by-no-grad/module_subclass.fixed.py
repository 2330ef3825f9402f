%%gradcheck
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(x)


torch.manual_seed(0)
clf = Classifier()
opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
data, labels = torch.randn(32, 6), torch.randint(0, 3, (32,))
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(clf(data), labels)
    loss.requires_grad_()
    loss.backward()
    opt.step()
