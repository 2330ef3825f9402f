%%gradcheck
net = Net()
criterion = nn.CrossEntropyLoss()
x, y = torch.randn(8, 20), torch.randint(0, 3, (8,))
loss = criterion(net(x), y)
loss.backward()
