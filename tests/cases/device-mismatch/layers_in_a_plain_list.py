%%gradcheck
device = torch.device("meta")
model = Mixer(4, 2).to(device)
out = model(torch.randn(3, 4, device=device))
