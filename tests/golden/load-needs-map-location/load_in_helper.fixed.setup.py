import os
import tempfile

import torch
import torch.nn as nn
import torch.serialization

torch.manual_seed(0)
ckpt_dir = tempfile.mkdtemp(prefix="grad_magic_ckpt_")
_location_tag = torch.serialization.location_tag
# NB: tag every storage "cuda:0" while saving: a checkpoint from a GPU machine, made without a GPU
torch.serialization.location_tag = lambda storage: "cuda:0"
try:
    ckpt_path = os.path.join(ckpt_dir, "model.pt")
    torch.save(nn.Linear(3, 2).state_dict(), ckpt_path)
finally:
    torch.serialization.location_tag = _location_tag


def load_weights(path):
    return torch.load(path, map_location="cpu")