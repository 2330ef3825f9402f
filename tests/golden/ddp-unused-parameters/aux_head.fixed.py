%%gradcheck
# NB: one rank in this process (tests/test_script_ranks.py runs two with torchrun); the group and the hook
# it installs are put back whatever happens
hook = sys.excepthook
dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
try:
    model = DDP(Net(), find_unused_parameters=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        opt.step()
finally:
    dist.destroy_process_group()
    sys.excepthook = hook
