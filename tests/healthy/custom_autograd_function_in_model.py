"""A custom torch.autograd.Function (MyReLU with forward/backward and ctx.save_for_backward) used inside an
nn.Module's forward, trained with SGD.

source: https://pytorch.org/tutorials/beginner/examples_autograd/two_layer_net_custom_function.html (MyReLU
kept as written, here applied via MyReLU.apply in a two-layer nn.Module); random data, 30 steps.
"""
# %%
import torch
import torch.nn as nn

torch.manual_seed(0)


class MyReLU(torch.autograd.Function):
    """
    We can implement our own custom autograd Functions by subclassing
    torch.autograd.Function and implementing the forward and backward passes
    which operate on Tensors.
    """

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


class TwoLayerNet(nn.Module):
    def __init__(self, D_in, H, D_out):
        super().__init__()
        self.linear1 = nn.Linear(D_in, H)
        self.linear2 = nn.Linear(H, D_out)

    def forward(self, x):
        h_relu = MyReLU.apply(self.linear1(x))
        return self.linear2(h_relu)


N, D_in, H, D_out = 32, 10, 20, 3
x = torch.randn(N, D_in)
y = torch.randn(N, D_out)
model = TwoLayerNet(D_in, H, D_out)
criterion = nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
# %%
for t in range(30):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
