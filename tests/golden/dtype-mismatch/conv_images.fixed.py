%%gradcheck
# A batch of images loaded with numpy into a small CNN
import numpy as np
import torch
import torch.nn as nn

images = np.random.rand(2, 3, 16, 16)
batch = torch.tensor(images, dtype=torch.float32)
conv = nn.Conv2d(3, 8, kernel_size=3)
features = conv(batch)
