#!/usr/bin/env python3
"""Writes the GPT-2-layout test checkpoint of models/gpt2_test.go.

A tiny GPT-2 (2 layers, 4 heads, width 32, 16 positions, 64 tokens) with
random weights, stored as a Hugging Face GPT-2 directory: config.json and
model.safetensors with Hugging Face's names (h.0.attn.c_attn.weight, wte,
wpe, ln_f; no "transformer." prefix, as the hub's gpt2 files) and
Conv1D's [in, out] weight layout, plus each block's causal-mask buffer
h.N.attn.bias that older files carry. logits.safetensors holds two token
sequences and their logits from the float64 forward below, written from
Hugging Face's modeling_gpt2 (GPT2LMHeadModel in eval mode): independent
of psclip's code.

Run once with Debian's PyTorch (apt-get install python3-torch):
    /usr/bin/python3 models/testdata/gpt2-tiny/gen.py
The safetensors files are written by hand (the format is a length, a JSON
header and the data), as Debian has no python3-safetensors.
"""
import json
import math
import os
import struct

import torch

L, H, D, P, V = 2, 4, 32, 16, 64
here = os.path.dirname(os.path.abspath(__file__))
g = torch.Generator().manual_seed(20240601)


def randn(*shape, std):
    return (torch.randn(*shape, generator=g, dtype=torch.float64) * std).to(torch.float32)


# Weights far from GPT-2's N(0, 0.02²), so that attention is not uniform and a
# transposed or misplaced tensor changes the logits by far more than rounding.
w = {"wte.weight": randn(V, D, std=0.5), "wpe.weight": randn(P, D, std=0.3)}
for i in range(L):
    h = f"h.{i}."
    w[h + "ln_1.weight"] = 1 + randn(D, std=0.2)
    w[h + "ln_1.bias"] = randn(D, std=0.2)
    w[h + "attn.c_attn.weight"] = randn(D, 3 * D, std=0.3)  # Conv1D: [in, out]
    w[h + "attn.c_attn.bias"] = randn(3 * D, std=0.2)
    w[h + "attn.c_proj.weight"] = randn(D, D, std=0.2)
    w[h + "attn.c_proj.bias"] = randn(D, std=0.2)
    w[h + "ln_2.weight"] = 1 + randn(D, std=0.2)
    w[h + "ln_2.bias"] = randn(D, std=0.2)
    w[h + "mlp.c_fc.weight"] = randn(D, 4 * D, std=0.3)
    w[h + "mlp.c_fc.bias"] = randn(4 * D, std=0.2)
    w[h + "mlp.c_proj.weight"] = randn(4 * D, D, std=0.15)
    w[h + "mlp.c_proj.bias"] = randn(D, std=0.2)
    w[h + "attn.bias"] = torch.tril(torch.ones(P, P)).view(1, 1, P, P)  # a buffer, not a weight
w["ln_f.weight"] = 1 + randn(D, std=0.2)
w["ln_f.bias"] = randn(D, std=0.2)


def gelu_new(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def layer_norm(x, weight, bias):
    return torch.nn.functional.layer_norm(x, (D,), weight.double(), bias.double(), eps=1e-5)


def conv1d(x, name):
    return x @ w[name + ".weight"].double() + w[name + ".bias"].double()


def forward(idx):
    B, T = idx.shape
    x = w["wte.weight"].double()[idx] + w["wpe.weight"].double()[:T]
    for i in range(L):
        h = f"h.{i}."
        a = layer_norm(x, w[h + "ln_1.weight"], w[h + "ln_1.bias"])
        q, k, v = conv1d(a, h + "attn.c_attn").split(D, dim=2)
        q, k, v = (t.view(B, T, H, D // H).transpose(1, 2) for t in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        att = att.masked_fill(torch.tril(torch.ones(T, T)) == 0, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        x = x + conv1d(y, h + "attn.c_proj")
        m = layer_norm(x, w[h + "ln_2.weight"], w[h + "ln_2.bias"])
        x = x + conv1d(gelu_new(conv1d(m, h + "mlp.c_fc")), h + "mlp.c_proj")
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
    return x @ w["wte.weight"].double().T  # lm_head tied to wte


def write(path, tensors, metadata=None):
    dtypes = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        b = t.numpy().tobytes()
        header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


config = {
    "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
    "n_layer": L, "n_head": H, "n_embd": D, "n_positions": P, "n_ctx": P, "vocab_size": V,
    "layer_norm_epsilon": 1e-5, "n_inner": None, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
}
with open(os.path.join(here, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
    f.write("\n")
write(os.path.join(here, "model.safetensors"), w, {"format": "pt"})
idx = torch.randint(0, V, (2, P), generator=g)
write(os.path.join(here, "logits.safetensors"), {"tokens": idx, "logits": forward(idx)})
