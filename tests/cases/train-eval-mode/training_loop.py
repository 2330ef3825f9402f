%%gradcheck
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
inputs, targets = torch.randn(64, 4), torch.randn(64, 1)

for epoch in range(2):
    for i in range(0, 64, 16):
        optimizer.zero_grad()
        loss = criterion(model(inputs[i:i + 16]), targets[i:i + 16])
        loss.backward()
        optimizer.step()
