%%gradcheck
import torch
import torch.nn as nn

# NB: no GPU here: the CUDA runtime's message (torch 2.11 on an H200, verbatim) is raised by hand where the loss
# kernel's own check (`t >= 0 && t < n_classes`) would stop it: the labels are numbered 1..3 for 3 classes.
ASSERT = ("CUDA error: device-side assert triggered\nSearch for `cudaErrorAssert' in https://docs.nvidia.com/cuda/"
          "cuda-runtime-api/group__CUDART__TYPES.html for more information.\nCUDA kernel errors might be "
          "asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor "
          "debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable "
          "device-side assertions.\n")


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


torch.manual_seed(0)
clf = Classifier()
criterion = nn.CrossEntropyLoss()
opt = torch.optim.SGD(clf.parameters(), lr=0.1)
x = torch.randn(32, 6)
labels = torch.randint(1, 4, (32,))
for epoch in range(3):
    logits = clf(x)
    if int(labels.max()) >= logits.shape[1]:
        raise torch.AcceleratorError(ASSERT)
    loss = criterion(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
