%%gradcheck
# The article's section-5 example: 'model.pth' was saved on a GPU (the setup fakes that), and this
# machine has none. Adapted only by dropping map_location='cpu', the article's fix, to show the error.
import torch

state_dict = torch.load('model.pth', map_location='cpu')
model.load_state_dict(state_dict)
