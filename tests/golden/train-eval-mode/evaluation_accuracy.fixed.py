%%gradcheck
correct = 0
model.eval()
with torch.no_grad():
    for i in range(0, 64, 16):
        predicted = model(test_x[i:i + 16]).argmax(dim=1)
        correct += (predicted == test_y[i:i + 16]).sum().item()
print(f"test accuracy: {correct / 64:.2%}")
