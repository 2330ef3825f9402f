import numpy as np
import torch

points = torch.as_tensor(np.random.rand(6, 2), dtype=torch.float32)