%%gradcheck
# A saliency map: the gradient of a score with respect to the input, on a model loaded under inference_mode
import torch
import torch.nn as nn

torch.manual_seed(0)
with torch.inference_mode():
    classifier = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
image = torch.randn(1, 6, requires_grad=True)
score = classifier(image)[0, 2]
score.backward()
saliency = image.grad.abs()
