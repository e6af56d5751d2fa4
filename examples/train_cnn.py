"""Main demo: train a small ResNet-style CNN for a few steps on CPU under pyprof_live.profile().

Synthetic data (no download), a real DataLoader, AdamW, `layer` annotations; prints the per-kernel
table (on CPU: one row per op, sorted by host time since there is no device time), then the op,
module and overview summaries.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

import pyprof_live


class BasicBlock(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(out)))


class SmallResNet(nn.Module):
    def __init__(self, classes: int = 10, width: int = 16):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.layer1 = nn.Sequential(BasicBlock(width), BasicBlock(width))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(width, classes)

    def forward(self, x):
        with pyprof_live.layer("features"):
            x = self.layer1(self.stem(x))
        with pyprof_live.layer("head"):
            return self.fc(torch.flatten(self.pool(x), 1))


def main(steps: int = 3) -> pyprof_live.Profile:
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(8 * steps, 3, 32, 32), torch.randint(0, 10, (8 * steps,)))
    loader = DataLoader(data, batch_size=8)
    model = SmallResNet()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with pyprof_live.profile() as p:
        for images, labels in loader:
            loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            p.step()
    return p


if __name__ == "__main__":
    prof = main()
    print(prof.table(sort="sil", limit=25, width=170, columns="idx,dir,module,layer,op,params,host,flops,bytes,trace"))
    print()
    print(prof.ops())
    print()
    print(prof.modules())
    print()
    print(prof.overview())
