%%gradcheck
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
model.load_state_dict(torch.load(ckpt_path, map_location="cpu"))
