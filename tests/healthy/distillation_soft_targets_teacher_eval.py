"""Knowledge distillation as in the PyTorch tutorial: a trained teacher in eval() whose logits come from under
torch.no_grad(), soft targets softmax(teacher / T), the student's log_softmax(student / T), the KL written
out as sum(p * (log p - log q)) / batch * T**2, plus a weighted cross-entropy on the labels.

source: https://pytorch.org/tutorials/beginner/knowledge_distillation_tutorial.html (train(),
train_knowledge_distillation() kept; the CIFAR-10 CNNs replaced by a wide and a narrow MLP on 96 random
vectors of 4 classes; the teacher trained first in a plain cell, then 5 epochs of 6 batches = 30 student steps).
"""
# %%
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(42)
X = torch.randn(96, 12)
y = (X[:, :4].argmax(1))
train_loader = [(X[i:i + 16], y[i:i + 16]) for i in range(0, 96, 16)]


class DeepNN(nn.Module):
    def __init__(self, num_classes=4):
        super(DeepNN, self).__init__()
        self.classifier = nn.Sequential(nn.Linear(12, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 64),
                                        nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, num_classes))

    def forward(self, x):
        return self.classifier(x)


class LightNN(nn.Module):
    def __init__(self, num_classes=4):
        super(LightNN, self).__init__()
        self.classifier = nn.Sequential(nn.Linear(12, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, num_classes))

    def forward(self, x):
        return self.classifier(x)


def train(model, train_loader, epochs, learning_rate):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=learning_rate)
    model.train()
    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            optimizer.zero_grad()
            outputs = model(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()


nn_deep = DeepNN(num_classes=4)
train(nn_deep, train_loader, epochs=5, learning_rate=0.001)
new_nn_light = LightNN(num_classes=4)
# %%
def train_knowledge_distillation(teacher, student, train_loader, epochs, learning_rate, T,
                                 soft_target_loss_weight, ce_loss_weight):
    ce_loss = nn.CrossEntropyLoss()
    optimizer = optim.Adam(student.parameters(), lr=learning_rate)

    teacher.eval()  # Teacher set to evaluation mode
    student.train()  # Student to train mode

    for epoch in range(epochs):
        running_loss = 0.0
        for inputs, labels in train_loader:
            optimizer.zero_grad()

            # Forward pass with the teacher model - do not save gradients here as we do not change the
            # teacher's weights
            with torch.no_grad():
                teacher_logits = teacher(inputs)

            # Forward pass with the student model
            student_logits = student(inputs)

            # Soften the student logits by applying softmax first and log() second
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)

            # Calculate the soft targets loss. Scaled by T**2 as suggested by the authors of the paper
            # "Distilling the knowledge in a neural network"
            soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T ** 2)

            # Calculate the true label loss
            label_loss = ce_loss(student_logits, labels)

            # Weighted sum of the two losses
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss

            loss.backward()
            optimizer.step()

            running_loss += loss.item()


train_knowledge_distillation(teacher=nn_deep, student=new_nn_light, train_loader=train_loader, epochs=5,
                             learning_rate=0.001, T=2, soft_target_loss_weight=0.25, ce_loss_weight=0.75)
