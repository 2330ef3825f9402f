%%gradcheck
import torch
import torch.nn as nn

class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(256, 256)

    def forward(self, x):
        # NB: no Apple GPU here: the MPS allocator's message, raised by hand
        raise RuntimeError(
            "MPS backend out of memory (MPS allocated: 17.89 GB, other allocations: 2.30 MB, max allowed: "
            "18.13 GB). Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 "
            "to disable upper limit for memory allocations (may cause system failure).")

encoder = Encoder()
images = torch.randn(128, 256)
features = encoder(images)
