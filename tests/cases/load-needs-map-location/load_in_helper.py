%%gradcheck
# torch.load runs inside load_weights, defined in an earlier cell: no line of this cell to fix
import torch.nn as nn

model = nn.Linear(3, 2)
model.load_state_dict(load_weights(ckpt_path))
