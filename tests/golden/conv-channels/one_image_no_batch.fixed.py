%%gradcheck
import torch
import torch.nn as nn

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 62 * 62, 2))
image = torch.rand(64, 64, 3)  # one image, as an image library loads it
with torch.no_grad():
    scores = model(image.permute(2, 0, 1).unsqueeze(0))
