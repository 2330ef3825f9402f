%%gradcheck
# The article's section-2 example as written (model, criterion, optimizer and dataset come from the setup)
for input, target in dataset:
    output = model(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # 忘记清零梯度！
