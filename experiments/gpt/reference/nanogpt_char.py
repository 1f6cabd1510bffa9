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

Replay a `psclip train gpt` run step by step: start from the same weights
(`psclip persample --model gpt` with the run's model flags and seed writes
them), draw the same batches (Go's PCG and IntN, as data/text's Sampler), take
nanoGPT's steps with the run's settings (read from its log.jsonl) and print
each step's loss and gradient norm next to psclip's:

    python3 nanogpt_char.py replay --text tinyshakespeare.txt --init DIR --log RUN/log.jsonl --steps 200

Estimate psclip checkpoints' final losses on exactly the batches `train`
estimates its own on, for a comparison free of evaluation-draw noise:

    python3 nanogpt_char.py evaluate --text tinyshakespeare.txt RUN [RUN ...]
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
    model = load_export(os.path.join(a.dir, "model.safetensors"), a.exact_gelu, a.n_head)
    batch = read_safetensors(os.path.join(a.dir, "batch.safetensors"))
    want = json.load(open(os.path.join(a.dir, "norms.json")))
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


MASK64 = (1 << 64) - 1


class GoPCG:
    """Go's math/rand/v2 PCG (128-bit LCG, DXSM output) and Rand.IntN."""
    MUL = (2549297995355413924 << 64) | 4865540595714422341
    INC = (6364136223846793005 << 64) | 1442695040888963407

    def __init__(self, seed1, seed2):
        self.state = (seed1 << 64) | seed2

    def uint64(self):
        self.state = (self.state * self.MUL + self.INC) & ((1 << 128) - 1)
        hi, lo = self.state >> 64, self.state & MASK64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & MASK64
        hi ^= hi >> 48
        return (hi * (lo | 1)) & MASK64

    def intn(self, n):
        if n & (n - 1) == 0:
            return self.uint64() & (n - 1)
        p = self.uint64() * n
        if p & MASK64 < n:
            thresh = ((1 << 64) - n) % n
            while p & MASK64 < thresh:
                p = self.uint64() * n
        return p >> 64


SAMPLER_STREAM = 0x7E47DA7A5EED0001  # data/text's pcgStream


def encode(path):
    data = open(path, encoding="utf-8").read()
    chars = sorted(set(data))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in data], dtype=np.int64)
    n = len(ids) * 9 // 10
    return len(chars), torch.from_numpy(ids[:n]), torch.from_numpy(ids[n:])


def load_export(path, exact_gelu, n_head):
    """Returns the GPT of a `psclip persample --model gpt` model.safetensors."""
    return load_weights(read_safetensors(path), exact_gelu, n_head)


def load_weights(weights, exact_gelu, n_head):
    """Returns the GPT with weights under nanoGPT's names."""
    wte = weights["transformer.wte.weight"]
    layers = 1 + max(int(k.split(".")[2]) for k in weights if k.startswith("transformer.h."))
    block = weights["transformer.wpe.weight"].shape[0]
    model = GPT(wte.shape[0], block, layers, n_head, wte.shape[1], exact_gelu)
    state = {k: torch.from_numpy(v.copy()) for k, v in weights.items()}
    state.setdefault("lm_head.weight", state["transformer.wte.weight"])
    model.load_state_dict(state, strict=True)
    return model


def adamw(model, c):
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": c["weight_decay"]},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return params, torch.optim.AdamW(groups, lr=c["lr"], betas=(c["beta1"], c["beta2"]), eps=c["eps"])


def get_lr(it, c):
    if it < c["warmup"]:
        return c["lr"] * (it + 1) / (c["warmup"] + 1)
    if it > c["steps"]:
        return c["min_lr"]
    ratio = (it - c["warmup"]) / (c["steps"] - c["warmup"])
    return c["min_lr"] + 0.5 * (1 + math.cos(math.pi * ratio)) * (c["lr"] - c["min_lr"])


def batch(tokens, B, T, gen=None):
    """nanoGPT's get_batch: B random windows of T tokens and their targets."""
    ix = torch.randint(len(tokens) - T, (B,), generator=gen)
    return torch.stack([tokens[i:i + T] for i in ix]), torch.stack([tokens[i + 1:i + 1 + T] for i in ix])


@torch.no_grad()
def estimate(model, tokens, iters, gen=None, B=12, T=64):
    """nanoGPT's estimate_loss for one split: the mean loss of iters batches."""
    model.eval()
    loss = sum(model(*batch(tokens, B, T, gen)).item() for _ in range(iters)) / iters
    model.train()
    return loss


def final_losses(model, split, iters, draws):
    """The final estimates: iters batches for each of draws seeded draws."""
    return {name: [estimate(model, split[name], iters, torch.Generator().manual_seed(s)) for s in range(draws)]
            for name in ("val", "train")}


def replay(a):
    torch.set_num_threads(a.threads)
    lines = [json.loads(l) for l in open(a.log)]
    c = lines[0]["config"]
    if c["accum"] != 1 or c["clip_mode"] != "global" or c["dropout"] != 0:
        sys.exit("replay follows global clipping with --accum 1 and no dropout")
    ref = {r["step"]: r for r in lines[1:] if "loss" in r}
    _, train_ids, _ = encode(a.text)
    model = load_export(os.path.join(a.init, "model.safetensors"), c.get("exact_gelu", False), c["n_head"])
    params, opt = adamw(model, c)
    rng, B, T = GoPCG(c["seed"], SAMPLER_STREAM), c["micro_batch"], c["block_size"]
    print("step  loss torch / psclip        grad norm torch / psclip")
    worst = 0.0
    for it in range(min(a.steps, c["steps"])):
        ix = [rng.intn(len(train_ids) - T) for _ in range(B)]
        x = torch.stack([train_ids[i:i + T] for i in ix])
        y = torch.stack([train_ids[i + 1:i + 1 + T] for i in ix])
        for g in opt.param_groups:
            g["lr"] = get_lr(it, c)
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, c["clip"]).item()
        opt.step()
        r = ref[it + 1]
        worst = max(worst, abs(loss.item() - r["loss"]) / r["loss"])
        if it < 10 or (it + 1) % a.every == 0:
            print(f"{it + 1:4d}  {loss.item():.6f} / {r['loss']:.6f}    {norm:.6f} / {r['grad_norm']:.6f}")
    print(f"largest relative loss difference over {min(a.steps, c['steps'])} steps: {worst:.1e}")


def train(a):
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    vocab, train_ids, val_ids = encode(a.text)
    split = {"train": train_ids, "val": val_ids}
    c = dict(lr=1e-3, min_lr=1e-4, warmup=100, steps=a.steps, weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8)
    B, T = 12, 64

    model = GPT(vocab, T, 4, 4, 128, a.exact_gelu)
    params, opt = adamw(model, c)

    curve, start = [], time.time()
    for it in range(a.steps + 1):
        if it % 250 == 0:  # nanoGPT's own estimate: 20 fresh batches
            curve.append({"step": it, "val_loss": estimate(model, val_ids, 20), "train_loss": estimate(model, train_ids, 20)})
            print(json.dumps(curve[-1]), flush=True)
        if it == a.steps:
            break
        for g in opt.param_groups:
            g["lr"] = get_lr(it, c)
        loss = model(*batch(train_ids, B, T))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
    final = final_losses(model, split, a.eval_iters, a.draws)
    res = {"seed": a.seed, "exact_gelu": a.exact_gelu, "torch": torch.__version__, "steps": a.steps,
           "seconds": time.time() - start, "curve": curve, "eval_iters": a.eval_iters, "final": final}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps({k: sum(v) / len(v) for k, v in final.items()}))


def evaluate(a):
    """Estimates psclip checkpoints' final losses exactly as train does."""
    torch.set_num_threads(a.threads)
    _, train_ids, val_ids = encode(a.text)
    for path in a.ckpt:
        if os.path.isdir(path):
            path = os.path.join(path, "ckpt.safetensors")
        weights = {k: v for k, v in read_safetensors(path).items() if k.startswith("transformer.")}
        model = load_weights(weights, a.exact_gelu, a.n_head)
        final = final_losses(model, {"train": train_ids, "val": val_ids}, a.eval_iters, a.draws)
        print(json.dumps({"ckpt": path, "final": final, **{k: sum(v) / len(v) for k, v in final.items()}}), flush=True)


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
    r = sub.add_parser("replay")
    r.add_argument("--text", required=True)
    r.add_argument("--init", required=True, help="directory of psclip persample --model gpt with the run's model flags and --seed")
    r.add_argument("--log", required=True, help="the run's log.jsonl")
    r.add_argument("--steps", type=int, default=200)
    r.add_argument("--every", type=int, default=50, help="print every N-th step after the first ten")
    r.add_argument("--threads", type=int, default=2)
    e = sub.add_parser("evaluate")
    e.add_argument("ckpt", nargs="+", help="psclip train gpt checkpoints or run directories")
    e.add_argument("--text", required=True)
    e.add_argument("--eval-iters", type=int, default=200)
    e.add_argument("--draws", type=int, default=4)
    e.add_argument("--n-head", type=int, default=4)
    e.add_argument("--exact-gelu", action="store_true")
    e.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    {"train": train, "check": check, "replay": replay, "evaluate": evaluate}[a.cmd](a)


if __name__ == "__main__":
    main()
