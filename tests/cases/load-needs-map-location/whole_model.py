%%gradcheck
# A whole pickled model (not a state_dict) needs weights_only=False since torch 2.6
import torch

model = torch.load(model_file, weights_only=False)
model.eval()
