%%gradcheck
torch.manual_seed(0)
a = torch.randn(5, requires_grad=True)
e = a.exp()
normalise_(e)
e.sum().backward()
