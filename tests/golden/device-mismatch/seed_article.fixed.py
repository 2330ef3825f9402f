%%gradcheck
# The article's section-5 example. Adapted: this test machine has no GPU, so the "meta" device stands in
# for CUDA (`model.to("meta")` for `model.cuda()`), and the article's undefined `model` is an nn.Linear(3, ...).
import torch
import torch.nn as nn

model = nn.Linear(3, 2)
model = model.to("meta")  # 模型在GPU (article: model = model.cuda())
inputs = torch.randn(10, 3, device=model.weight.device)  # 数据在CPU
outputs = model(inputs)  # 报错！
