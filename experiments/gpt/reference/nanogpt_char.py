"""A PyTorch reference for psclip's GPT: the nanoGPT quality check, and a
cross-framework check of psclip's per-sample losses and gradient norms.

Train (nanoGPT's character-level Shakespeare CPU configuration: 4 layers,
4 heads, width 128, block 64, batch 12, 2000 steps, lr 1e-3 -> 1e-4,
beta2 0.99, warm-up 100, weight decay 0.1 on tensors with >= 2 dims, clipping
at 1, dropout 0), with nanoGPT's recipe written out from its description so
that it runs on the PyTorch Debian packages (1.13, which has no
scaled_dot_product_attention), and report the final losses the way
`psclip eval gpt` does: the mean over --eval-iters random batches, for
--draws independent draws:

    python3 nanogpt_char.py train --text tinyshakespeare.txt --seed 1 --out ref-1.json

Check an export of `psclip persample --model gpt --out DIR` (model and batch
in safetensors, nanoGPT's tensor names): recompute every sequence's loss and
gradient norm with torch autograd, one sequence at a time, and compare with
DIR/norms.json:

    python3 nanogpt_char.py check DIR [--exact-gelu]
"""
import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(d, 3 * d, bias=False)
        self.c_proj = nn.Linear(d, d, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(block, block)), persistent=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = F.softmax(att.masked_fill(self.mask[:t, :t] == 0, float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, d))


class MLP(nn.Module):
    def __init__(self, d, exact_gelu):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d, bias=False)
        self.gelu = nn.GELU() if exact_gelu else nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


def layer_norm(d):
    ln = nn.LayerNorm(d)
    ln.bias = None  # nanoGPT's bias=False
    return ln


class Block(nn.Module):
    def __init__(self, d, heads, block, exact_gelu):
        super().__init__()
        self.ln_1, self.attn = layer_norm(d), CausalSelfAttention(d, heads, block)
        self.ln_2, self.mlp = layer_norm(d), MLP(d, exact_gelu)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, layers, heads, d, exact_gelu):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block, d),
            h=nn.ModuleList(Block(d, heads, block, exact_gelu) for _ in range(layers)),
            ln_f=layer_norm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        for name, p in self.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets, reduction="mean"):
        tr = self.transformer
        x = tr.wte(idx) + tr.wpe(torch.arange(idx.size(1)))
        for blk in tr.h:
            x = blk(x)
        logits = self.lm_head(tr.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1), reduction=reduction)


def read_safetensors(path):
    """Returns {name: numpy array} of a safetensors file (F32, I32 only)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    types = {"F32": np.float32, "I32": np.int32}
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        b, e = h["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype=types[h["dtype"]]).reshape(h["shape"])
    return out


def check(a):
    weights = read_safetensors(os.path.join(a.dir, "model.safetensors"))
    batch = read_safetensors(os.path.join(a.dir, "batch.safetensors"))
    want = json.load(open(os.path.join(a.dir, "norms.json")))
    wte = weights["transformer.wte.weight"]
    layers = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("transformer.h."))
    d, heads = wte.shape[1], a.n_head
    block = weights["transformer.wpe.weight"].shape[0]
    model = GPT(wte.shape[0], block, layers, heads, d, a.exact_gelu)
    state = {k: torch.from_numpy(v.copy()) for k, v in weights.items()}
    state.setdefault("lm_head.weight", state["transformer.wte.weight"])
    model.load_state_dict(state, strict=True)
    x, y = torch.from_numpy(batch["x"].astype(np.int64)), torch.from_numpy(batch["y"].astype(np.int64))
    worst = 0.0
    for i in range(x.size(0)):
        model.zero_grad()
        loss = model(x[i:i + 1], y[i:i + 1])
        loss.backward()
        norm = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in model.parameters()))
        for what, got, ref in (("loss", loss.item(), want["loss"][i]), ("grad_norm", norm, want["grad_norm"][i])):
            rel = abs(got - ref) / abs(ref)
            worst = max(worst, rel)
            print(f"sequence {i}: {what} torch {got:.7g}  psclip {ref:.7g}  relative difference {rel:.1e}")
    print(f"largest relative difference {worst:.1e}")
    sys.exit(0 if worst <= a.tol else 1)


def train(a):
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    data = open(a.text, encoding="utf-8").read()
    chars = sorted(set(data))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in data], dtype=np.int64)
    n = len(ids) * 9 // 10
    split = {"train": torch.from_numpy(ids[:n]), "val": torch.from_numpy(ids[n:])}
    B, T, lr, min_lr, warmup = 12, 64, 1e-3, 1e-4, 100

    def batch(name, gen=None):
        d = split[name]
        ix = torch.randint(len(d) - T, (B,), generator=gen)
        return torch.stack([d[i:i + T] for i in ix]), torch.stack([d[i + 1:i + 1 + T] for i in ix])

    model = GPT(len(chars), T, 4, 4, 128, a.exact_gelu)
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.99))

    def get_lr(it):
        if it < warmup:
            return lr * (it + 1) / (warmup + 1)
        ratio = (it - warmup) / (a.steps - warmup)
        return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (lr - min_lr)

    @torch.no_grad()
    def estimate(name, iters, gen=None):
        model.eval()
        loss = sum(model(*batch(name, gen)).item() for _ in range(iters)) / iters
        model.train()
        return loss

    curve, start = [], time.time()
    for it in range(a.steps + 1):
        if it % 250 == 0:  # nanoGPT's own estimate: 20 fresh batches
            curve.append({"step": it, "val_loss": estimate("val", 20), "train_loss": estimate("train", 20)})
            print(json.dumps(curve[-1]), flush=True)
        if it == a.steps:
            break
        for g in opt.param_groups:
            g["lr"] = get_lr(it)
        loss = model(*batch("train"))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    final = {name: [estimate(name, a.eval_iters, torch.Generator().manual_seed(s)) for s in range(a.draws)]
             for name in ("val", "train")}
    res = {"seed": a.seed, "exact_gelu": a.exact_gelu, "torch": torch.__version__, "steps": a.steps,
           "seconds": time.time() - start, "curve": curve, "eval_iters": a.eval_iters, "final": final}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: sum(v) / len(v) for k, v in final.items()}))


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--text", required=True)
    t.add_argument("--seed", type=int, default=1337)
    t.add_argument("--steps", type=int, default=2000)
    t.add_argument("--eval-iters", type=int, default=200)
    t.add_argument("--draws", type=int, default=4)
    t.add_argument("--exact-gelu", action="store_true")
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--out", required=True)
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--n-head", type=int, default=4)
    c.add_argument("--exact-gelu", action="store_true")
    c.add_argument("--tol", type=float, default=2e-6)
    a = ap.parse_args()
    torch.set_default_dtype(torch.float32)
    (train if a.cmd == "train" else check)(a)


if __name__ == "__main__":
    main()
