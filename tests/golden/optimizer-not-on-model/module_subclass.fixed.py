%%gradcheck
import torch
import torch.nn.functional as F

clf = Classifier()
opt = torch.optim.SGD(clf.parameters(), lr=0.05, momentum=0.9)
x, target = torch.randn(8, 5), torch.randint(0, 3, (8,))
loss = F.cross_entropy(clf(x), target)
opt.zero_grad()
loss.backward()
opt.step()
