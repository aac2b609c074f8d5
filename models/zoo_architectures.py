# SPDX-License-Identifier: Apache-2.0
"""Architectures of the zoo that torchvision and torch.nn do not ship whole.

Each is the usual form of a family that real deployments run: a U-Net that upsamples with
ConvTranspose, a BERT-style encoder fed token ids, taggers on LSTM and GRU layers, a 1-D
network on raw audio, and the detection network of torchvision's ssdlite320 (its
backbone and heads, without the post-processing). Weights are random; export_zoo.py
exports them.
"""
import torch
from torch import nn


class TokenIds:
    """An int64 model input of token ids in [0, vocabulary): export_model seeds it."""

    def __init__(self, shape, vocabulary):
        self.shape = tuple(shape)
        self.vocabulary = vocabulary


def conv_block(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU(),
        nn.Conv2d(out_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU())


class UNetSmall(nn.Module):
    """A U-Net of three levels (16, 32, 64 channels, a 128-channel bottleneck): max-pool
    down, stride-2 ConvTranspose up, skip concatenations, a 1x1 head of 2 classes."""

    def __init__(self, widths=(16, 32, 64), classes=2):
        super().__init__()
        self.down = nn.ModuleList()
        channels = 3
        for width in widths:
            self.down.append(conv_block(channels, width))
            channels = width
        self.bottleneck = conv_block(channels, 2 * channels)
        channels *= 2
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        for width in reversed(widths):
            self.up.append(nn.ConvTranspose2d(channels, width, 2, stride=2))
            self.merge.append(conv_block(2 * width, width))
            channels = width
        self.head = nn.Conv2d(channels, classes, 1)

    def forward(self, x):
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottleneck(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class BertEncoder(nn.Module):
    """A BERT-style encoder: token, position and segment embeddings (a Gather of each),
    LayerNorm, 4 GELU encoder layers (d_model 256, 4 heads), a tanh pooler on the first
    token. Input: int64 token ids, 1x128."""

    def __init__(self, vocabulary=8000, length=128, width=256, layers=4):
        super().__init__()
        self.tokens = nn.Embedding(vocabulary, width)
        self.positions = nn.Embedding(length, width)
        self.segments = nn.Embedding(2, width)
        self.norm = nn.LayerNorm(width)
        layer = nn.TransformerEncoderLayer(width, 4, 4 * width, dropout=0.0, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        for parameter in self.encoder.parameters():  # distinct layers, as nn.Transformer starts them
            if parameter.dim() > 1:
                nn.init.xavier_uniform_(parameter)
        self.pooler = nn.Linear(width, width)
        self.register_buffer("position_ids", torch.arange(length).unsqueeze(0))

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(self.position_ids) + self.segments(torch.zeros_like(ids))
        x = self.encoder(self.norm(x))
        return x, torch.tanh(self.pooler(x[:, 0]))


class LstmTokenTagger(nn.Module):
    """A part-of-speech style tagger: token embeddings (vocabulary 5000, 128 wide), a
    bidirectional LSTM of 128 units, a per-token classifier into 17 tags. Input: int64
    token ids, 1x64."""

    def __init__(self, vocabulary=5000, width=128, tags=17):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.rnn = nn.LSTM(width, width, batch_first=True, bidirectional=True)
        self.tags = nn.Linear(2 * width, tags)

    def forward(self, ids):
        return torch.log_softmax(self.tags(self.rnn(self.embedding(ids))[0]), dim=-1)


class GruSpeechTagger(nn.Module):
    """Frame classification on speech features: two stacked GRU layers of 128 units over
    100 frames of 40 filterbank features, then 32 classes a frame. Input 1x100x40."""

    def __init__(self, features=40, width=128, classes=32):
        super().__init__()
        self.rnn = nn.GRU(features, width, num_layers=2, batch_first=True)
        self.classes = nn.Linear(width, classes)

    def forward(self, x):
        return self.classes(self.rnn(x)[0])


class AudioM5(nn.Module):
    """M5 (Dai et al., 2017): 1-D convolutions on raw 16 kHz audio, a first layer of
    stride 4 and width 80, batch norm, max pooling, global average pooling and 35 classes
    (the keyword set of Speech Commands). Input: one second, 1x1x16000."""

    def __init__(self, width=64, classes=35):
        super().__init__()
        layers, channels = [], 1
        for out_channels, kernel, stride in ((width, 80, 4), (width, 3, 1), (2 * width, 3, 1), (2 * width, 3, 1)):
            layers += [nn.Conv1d(channels, out_channels, kernel, stride=stride), nn.BatchNorm1d(out_channels),
                       nn.ReLU(), nn.MaxPool1d(4)]
            channels = out_channels
        self.features = nn.Sequential(*layers)
        self.classes = nn.Linear(channels, classes)

    def forward(self, x):
        return torch.log_softmax(self.classes(self.features(x).mean(dim=-1)), dim=-1)


class SsdliteNetwork(nn.Module):
    """torchvision's ssdlite320_mobilenet_v3_large without its post-processing: the
    backbone's six feature maps through the box and class heads, as the two tensors its
    detection step reads (box regressions and class logits for each of the 3234 anchors).
    Input 1x3x320x320."""

    def __init__(self):
        super().__init__()
        import torchvision
        model = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        self.backbone, self.head = model.backbone, model.head

    def forward(self, x):
        out = self.head(list(self.backbone(x).values()))
        return out["bbox_regression"], out["cls_logits"]
