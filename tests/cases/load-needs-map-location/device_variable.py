%%gradcheck
import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = nn.Linear(3, 2).to(device)
model.load_state_dict(torch.load(ckpt_path))
