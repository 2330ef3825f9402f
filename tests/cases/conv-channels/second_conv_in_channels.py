%%gradcheck
x = torch.randn(4, 3, 32, 32)
y = torch.randint(0, 10, (4,))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
