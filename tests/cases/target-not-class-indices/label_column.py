%%gradcheck
import numpy as np
import torch
import torch.nn as nn

table = np.random.rand(20, 5).astype(np.float32)
labels = np.random.randint(0, 3, size=(20, 1))  # a label column cut from a data frame
x, y = torch.from_numpy(table), torch.from_numpy(labels)

model = nn.Linear(5, 3)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
