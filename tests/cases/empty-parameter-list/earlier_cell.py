%%gradcheck
import torch

model = Tower()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
