import os
import tempfile
import warnings

import torch
import torch.nn as nn
import torch.serialization

torch.manual_seed(0)
ckpt_dir = tempfile.mkdtemp(prefix="grad_magic_ckpt_")
_location_tag = torch.serialization.location_tag
# NB: tag every storage "cuda:0" while saving: a checkpoint from a GPU machine, made without a GPU
torch.serialization.location_tag = lambda storage: "cuda:0"
try:
    _model = nn.Linear(4, 1)
    with warnings.catch_warnings():  # NB: a first optimizer imports sympy, which adds a warning filter
        _opt = torch.optim.SGD(_model.parameters(), lr=0.01, momentum=0.9)
    _model(torch.randn(8, 4)).pow(2).mean().backward()
    _opt.step()
    ckpt_path = os.path.join(ckpt_dir, "checkpoint.pt")
    torch.save({"model": _model.state_dict(), "optimizer": _opt.state_dict(), "epoch": 3}, ckpt_path)
finally:
    torch.serialization.location_tag = _location_tag
