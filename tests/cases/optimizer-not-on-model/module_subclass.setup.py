import torch
import torch.nn as nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(5, 3)

    def forward(self, x):
        return self.fc(x)

clf = Classifier()
opt = torch.optim.SGD(clf.parameters(), lr=0.05, momentum=0.9)
