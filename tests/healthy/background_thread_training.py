"""A second model trained on a background thread while the foreground cell trains its own.

source: https://docs.python.org/3/library/threading.html with the training loop of
https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html in each thread (Hogwild-style
notebooks run a worker this way); 30 steps each.
"""
# %%
import threading
import torch
import torch.nn as nn

torch.manual_seed(0)


def train(model, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        x = torch.randn(8, 4)
        loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


side = nn.Linear(4, 1)
# %%
worker = threading.Thread(target=train, args=(side, 30))
worker.start()
main_model = nn.Linear(4, 1)
main_opt = torch.optim.SGD(main_model.parameters(), lr=0.05)
for _ in range(30):
    x = torch.randn(8, 4)
    loss = (main_model(x) - x.sum(1, keepdim=True)).pow(2).mean()
    main_opt.zero_grad()
    loss.backward()
    main_opt.step()
worker.join()
