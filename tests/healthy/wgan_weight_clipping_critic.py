"""The original WGAN: the critic's weights clamped to [-c, c] before each critic step, Diters critic steps
per generator step, `errD_real.backward(one)` / `errD_fake.backward(mone)` with gradient arguments, the
generator frozen for the critic (fake made without grad) and the critic's requires_grad switched off for
the generator step, RMSprop for both.

source: https://github.com/martinarjovsky/WassersteinGAN/blob/master/main.py (the training loop kept; the
DCGAN nets replaced by MLPs on 2-D points, `Variable(..., volatile=True)` by torch.no_grad(), the
"100 critic steps for the first 25 generator iterations" warm-up dropped: Diters = 5, 6 generator iterations).
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
nz, batchSize, Diters = 4, 16, 5
clamp_lower, clamp_upper = -0.01, 0.01


class MLP_G(nn.Module):
    def __init__(self, nz, ngf, out):
        super(MLP_G, self).__init__()
        self.main = nn.Sequential(nn.Linear(nz, ngf), nn.ReLU(True), nn.Linear(ngf, ngf), nn.ReLU(True),
                                  nn.Linear(ngf, out))

    def forward(self, input):
        return self.main(input.view(input.size(0), -1))


class MLP_D(nn.Module):
    def __init__(self, inp, ndf):
        super(MLP_D, self).__init__()
        self.main = nn.Sequential(nn.Linear(inp, ndf), nn.ReLU(True), nn.Linear(ndf, ndf), nn.ReLU(True),
                                  nn.Linear(ndf, 1))

    def forward(self, input):
        output = self.main(input)
        output = output.mean(0)
        return output.view(1)


netG = MLP_G(nz, 16, 2)
netD = MLP_D(2, 16)
real_points = torch.randn(32 * 16, 2) * 0.5 + torch.tensor([2.0, -1.0])
dataloader = [(real_points[i:i + batchSize], None) for i in range(0, len(real_points), batchSize)]

input = torch.FloatTensor(batchSize, 2)
noise = torch.FloatTensor(batchSize, nz, 1, 1)
one = torch.FloatTensor([1])
mone = one * -1
optimizerD = optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = optim.RMSprop(netG.parameters(), lr=5e-5)
# %%
gen_iterations = 0
for epoch in range(1):
    data_iter = iter(dataloader)
    i = 0
    while i < len(dataloader) and gen_iterations < 6:
        ############################
        # (1) Update D network
        ###########################
        for p in netD.parameters():  # reset requires_grad
            p.requires_grad = True  # they are set to False below in netG update

        j = 0
        while j < Diters and i < len(dataloader):
            j += 1

            # clamp parameters to a cube
            for p in netD.parameters():
                p.data.clamp_(clamp_lower, clamp_upper)

            data = next(data_iter)
            i += 1

            # train with real
            real_cpu, _ = data
            netD.zero_grad()
            input.resize_as_(real_cpu).copy_(real_cpu)
            inputv = input

            errD_real = netD(inputv)
            errD_real.backward(one)

            # train with fake
            noise.resize_(batchSize, nz, 1, 1).normal_(0, 1)
            with torch.no_grad():  # totally freeze netG
                fake = netG(noise)
            inputv = fake
            errD_fake = netD(inputv)
            errD_fake.backward(mone)
            errD = errD_real - errD_fake
            optimizerD.step()

        ############################
        # (2) Update G network
        ###########################
        for p in netD.parameters():
            p.requires_grad = False  # to avoid computation
        netG.zero_grad()
        # in case our last batch was the tail batch of the dataloader,
        # make sure we feed a full batch of noise
        noise.resize_(batchSize, nz, 1, 1).normal_(0, 1)
        fake = netG(noise)
        errG = netD(fake)
        errG.backward(one)
        optimizerG.step()
        gen_iterations += 1
