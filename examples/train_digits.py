"""Train a small CNN on the handwritten digits that ship with scikit-learn (8x8 images, 10 classes; no download).

An ordinary PyTorch training script: swap `import ember as torch` for `import torch` and it runs on PyTorch.
It prints a progress bar per epoch and the test accuracy, writes a checkpoint (model and optimizer state, loadable
by torch.load too) and a loss/accuracy plot.
"""
import argparse
import pathlib

import numpy as np
from sklearn.datasets import load_digits
from tqdm import tqdm

import ember as torch
import ember.nn as nn
import ember.nn.functional as F
from ember.utils.data import DataLoader, TensorDataset


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(32 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)   # 16 x 4 x 4
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)   # 32 x 2 x 2
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def load_data(seed):
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]      # N x 1 x 8 x 8 in [0, 1]
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    split = int(0.8 * len(labels))
    train, test = order[:split], order[split:]
    return (torch.from_numpy(images[train]), torch.from_numpy(labels[train]),
            torch.from_numpy(images[test]), torch.from_numpy(labels[test]))


def evaluate(model, x, y):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    model.train()
    return loss, accuracy


def main(epochs=20, batch_size=64, lr=3e-3, seed=0, out_dir="examples/out", plot=True):
    torch.manual_seed(seed)
    x_train, y_train, x_test, y_test = load_data(seed)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=batch_size, shuffle=True)
    model = DigitsNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = {"train_loss": [], "test_loss": [], "test_accuracy": []}
    n = len(y_train)
    for epoch in range(1, epochs + 1):
        running = 0.0
        bar = tqdm(loader, desc=f"epoch {epoch:2d}/{epochs}", leave=False)
        for images, labels in bar:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * len(labels)
            bar.set_postfix(loss=f"{loss.item():.4f}")
        test_loss, test_accuracy = evaluate(model, x_test, y_test)
        history["train_loss"].append(running / n)
        history["test_loss"].append(test_loss)
        history["test_accuracy"].append(test_accuracy)
        print(f"epoch {epoch:2d}: train loss {running / n:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {100 * test_accuracy:.2f}%")

    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint = out / "digits_cnn.pt"
    torch.save({"epoch": epochs, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "test_accuracy": history["test_accuracy"][-1]}, checkpoint)
    print(f"checkpoint written to {checkpoint}")
    if plot:
        _plot(history, out / "digits_training.png")
    print(f"test accuracy: {100 * history['test_accuracy'][-1]:.2f}%")
    return history


def _plot(history, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    epochs = range(1, len(history["train_loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax1.plot(epochs, history["train_loss"], label="train")
    ax1.plot(epochs, history["test_loss"], label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy")
    ax1.legend()
    ax2.plot(epochs, [100 * a for a in history["test_accuracy"]])
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("test accuracy (%)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"plot written to {path}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    args = parser.parse_args()
    main(args.epochs, args.batch_size, args.lr)
