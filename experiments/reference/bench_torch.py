"""PyTorch's side of psclip's speed comparison: the training steps that
`psclip bench step` times, with the same models, shapes, batch, optimizer and
thread count, on PyTorch's CPU backend.

Models (the layer shapes of psclip's models/alexnet.go and models/gpt.go):

  alexnet-cifar  torchvision's AlexNet for 32x32 images as in the paper
                 (3x3 first convolution, 2x2 stride-2 max-pools, dropout 0.5),
                 [B,3,32,32] images ~ N(0,1), uniform labels of --classes;
  gpt            nanoGPT's GPT (experiments/gpt/reference/nanogpt_char.py:
                 no biases, tied embedding, tanh GELU), uniform tokens of
                 --vocab-size as inputs and targets.

Estimators, each a full step (forward, backward, clipping, SGD with momentum
0.9 and lr 1e-4, as bench step's optimizer):

  sgd            loss.backward() and the update;
  clip-sgd       the same plus clip_grad_norm_ to --gamma;
  ps-clip-sgd    per-sample gradients g_i by functorch's vmap(grad(...)),
                 clipped to norm --gamma and averaged, (1/B)·Σ_i min(1, γ/|g_i|)·g_i,
                 as psclip's ps-clip-sgd. vmap materialises every g_i; for
                 AlexNet (57 M parameters, 14.6 GB at batch 64) the batch is
                 cut into chunks whose gradients fit in --vmap-mb. Dropout
                 masks are shared by the samples of a chunk (vmap's
                 randomness="same": functorch 1.13 refuses "different" for
                 dropout); the work is the same.

Timing: --warmup untimed steps, then --steps rounds in which every estimator
takes one step (the order rotating), wall time (perf_counter) and the
process's CPU time (process_time, all threads) of each step. With --json it
prints bench step's JSON keys (step_ms_median, cpu_ms_median, step_ms,
images_per_s / tokens_per_s, ratio_to_first, paired_ratio_to_first,
cpu_ratio_to_first) and peak_rss_mb.

    python3 bench_torch.py run --model alexnet-cifar --batch 64 --threads 2 --steps 10
    python3 bench_torch.py run --model gpt --batch 12 --vocab-size 65 --threads 2 --steps 30

`compare` interleaves whole runs of psclip and of this script, alternating
which goes first, for the configurations the README's performance table
reports, and prints the throughput ratio psclip/PyTorch of the SGD step and
each side's PS-Clip/SGD ratio, per round and as medians:

    go build -o /tmp/psclip ./cmd/psclip
    python3 experiments/reference/bench_torch.py compare --psclip /tmp/psclip \
        --configs alexnet,char,gpt6x384 --threads 1,2 --rounds 3

`bound` reads a compare file and psclip bench gemm files of the same
kernel (one thread) and prints, for each configuration, the most psclip's
plain step could gain over PyTorch's: PyTorch's step time over the time the
step's products alone take at the fastest GEMM rate measured (step_macs;
for the GPTs 3·B·T·(12·L·d² + d·V) + 3·L·B·T·(T+1)·d multiply-adds):

    python3 experiments/reference/bench_torch.py bound \
        --compare bench/evidence/torch/compare-avx2.json --gemm bench/evidence/gemm/*.json

psclip runs with GOMAXPROCS set to the thread count, PyTorch with
torch.set_num_threads, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS set to it
and OMP_WAIT_POLICY=PASSIVE, and glibc's malloc told to keep the memory
PyTorch frees (GLIBC_TUNABLES, MALLOC_TUNABLES; see thread_env; variables
already set are kept; --keep-env leaves them unset, PyTorch's defaults:
OpenBLAS then starts a thread per core besides OpenMP's, both spin while
they wait, and tensors up to 32 MiB fault their pages in every step). Needs PyTorch >= 1.13 with
functorch (Debian: python3-torch); the Debian packages install into the
system interpreter, /usr/bin/python3.
"""
import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, vmap
from torch.nn.utils.stateless import functional_call

HERE = os.path.dirname(os.path.abspath(__file__))


def load_nanogpt():
    """The GPT of experiments/gpt/reference/nanogpt_char.py."""
    path = os.path.join(HERE, "..", "gpt", "reference", "nanogpt_char.py")
    spec = importlib.util.spec_from_file_location("nanogpt_char", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.GPT


class AlexNetCIFAR(nn.Module):
    """models/alexnet.go's AlexNet-CIFAR, with torchvision's names."""

    def __init__(self, classes, dropout=0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(64, 192, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(192, 384, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(dropout), nn.Linear(256 * 36, 4096), nn.ReLU(inplace=True),
            nn.Dropout(dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


def build(a):
    """Returns the model, a batch (x, y) and the loss of (model output, y)."""
    g = torch.Generator().manual_seed(a.seed)
    torch.manual_seed(a.seed)
    if a.model == "alexnet-cifar":
        model = AlexNetCIFAR(a.classes)
        x = torch.randn(a.batch, 3, 32, 32, generator=g)
        y = torch.randint(a.classes, (a.batch,), generator=g)
        return model, x, y, lambda out, y: F.cross_entropy(out, y)
    GPT = load_nanogpt()
    model = GPT(a.vocab_size, a.block_size, a.n_layer, a.n_head, a.n_embd, False)
    x = torch.randint(a.vocab_size, (a.batch, a.block_size), generator=g)
    y = torch.randint(a.vocab_size, (a.batch, a.block_size), generator=g)
    return model, x, y, None


class Stepper:
    """One model and optimizer; a step of each estimator on the same batch."""

    def __init__(self, a):
        self.a = a
        self.model, self.x, self.y, self.loss = build(a)
        self.model.train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=1e-4, momentum=0.9)
        # Tied parameters (the GPT's embedding and head) appear once in
        # named_parameters; functional_call needs every name that uses them.
        self.names = dict(self.model.named_parameters())
        every = [(f"{mn}.{pn}" if mn else pn, p) for mn, mod in self.model.named_modules()
                 for pn, p in mod._parameters.items() if p is not None]
        self.ties = {n: m for n, p in every for m, q in self.names.items() if p is q and n != m}
        per = 4 * sum(p.numel() for p in self.names.values())
        self.chunk = max(1, min(a.batch, int(a.vmap_mb * 2**20) // per))

    def forward_loss(self, x, y):
        if self.loss is None:
            return self.model(x, y)
        return self.loss(self.model(x), y)

    def sgd(self, clip):
        self.opt.zero_grad(set_to_none=True)
        self.forward_loss(self.x, self.y).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.a.gamma)
        self.opt.step()

    def sample_loss(self, params, x, y):
        full = dict(params)
        for n, m in self.ties.items():
            full[n] = params[m]
        x, y = x.unsqueeze(0), y.unsqueeze(0)
        if self.loss is None:
            return functional_call(self.model, full, (x, y))
        return self.loss(functional_call(self.model, full, (x,)), y)

    def ps_clip(self):
        params = {n: p.detach() for n, p in self.names.items()}
        per_sample = vmap(grad(self.sample_loss), in_dims=(None, 0, 0), randomness="same")
        total = {n: torch.zeros_like(p) for n, p in params.items()}
        b = self.x.size(0)
        for lo in range(0, b, self.chunk):
            g = per_sample(params, self.x[lo:lo + self.chunk], self.y[lo:lo + self.chunk])
            sq = sum(v.flatten(1).pow(2).sum(1) for v in g.values())
            c = (self.a.gamma / sq.sqrt()).clamp(max=1.0) / b
            for n, v in g.items():
                total[n] += torch.tensordot(c, v, dims=1)
        for n, p in self.names.items():
            p.grad = total[n]
        self.opt.step()

    def step(self, name):
        if name == "sgd":
            self.sgd(False)
        elif name == "clip-sgd":
            self.sgd(True)
        elif name == "ps-clip-sgd":
            self.ps_clip()
        else:
            sys.exit(f"bench_torch: unknown estimator {name!r}")


def checkout_commit():
    """The commit of this checkout, "+dirty" when tracked files differ from
    it, or "unknown": taken when the work starts, as the checkout may move
    while it runs."""
    def git(*args):
        try:
            return subprocess.run(["git", "-C", HERE] + list(args), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True).stdout.strip()
        except OSError:
            return ""
    commit = git("rev-parse", "HEAD") or "unknown"
    if commit != "unknown" and git("status", "--porcelain", "--untracked-files=no"):
        commit += "+dirty"
    return commit


def provenance(started, load_before, commit):
    """The provenance record of psclip's results files (package provenance),
    for a result of this script: the command, the commit of this checkout
    when the work started, the CPU, the kernel that ran PyTorch's GEMMs
    (Debian's torch calls OpenBLAS: its core type), the threads and the
    load."""
    return {"command": [os.path.basename(sys.argv[0])] + sys.argv[1:], "commit": commit,
            "python": sys.version.split()[0], "torch": torch.__version__,
            "cpu": cpu_name(), "kernel": openblas_core(),
            "threads": torch.get_num_threads(), "cpus": os.cpu_count(),
            "env": {k: os.environ.get(k, "") for k in RUN_ENV + KERNEL_ENV},
            "load_before": load_before, "load_after": loadavg(),
            "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


# KERNEL_ENV are the variables that change which OpenBLAS kernel runs or
# how it blocks, which instructions oneDNN (PyTorch's convolutions) uses,
# and which micro-kernel psclip runs (compare's other side); provenance
# records them.
KERNEL_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "ONEDNN_MAX_CPU_ISA", "PSCLIP_KERNEL")


def openblas_core():
    """The CPU core OpenBLAS chose its kernels for (its vector width), by
    openblas_get_corename in the libopenblas that torch loaded, or
    "unknown"."""
    import ctypes
    try:
        for line in open("/proc/self/maps"):
            path = line.split()[-1]
            if "libopenblas" in path or "libblas" in path:
                lib = ctypes.CDLL(path)
                if hasattr(lib, "openblas_get_corename"):
                    lib.openblas_get_corename.restype = ctypes.c_char_p
                    return "openblas " + lib.openblas_get_corename().decode()
    except OSError:
        pass
    return "unknown"


def loadavg():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return 0.0


# THREAD_ENV is the environment of a run with n threads, unless the caller
# set it: PyTorch's OpenMP pool and OpenBLAS's own threads (Debian's torch
# calls OpenBLAS for its GEMMs) both n wide, and OpenMP threads that sleep
# instead of spinning when idle. Spinning threads of the two pools, or of
# other processes on a shared machine, slowed steps down up to tenfold in
# trials on two cores; passive waiting gave the fastest and steadiest steps.
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")


# MALLOC_TUNABLES keep glibc's malloc from serving PyTorch's tensors of up
# to 32 MiB with fresh mmaps (and trimming freed memory back), whose pages
# fault in again every step: with glibc's defaults the char GPT's plain step
# took 43 – 44 ms, with these 39 – 41 (one thread, AMD EPYC Zen 5).
# psclip's Go heap keeps its memory; PyTorch gets the same.
MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=4294967295"


# RUN_ENV are the variables thread_env sets: runs record them.
RUN_ENV = THREAD_ENV + ("OMP_WAIT_POLICY", "GLIBC_TUNABLES")


def thread_env(n):
    env = dict(os.environ)
    for k in THREAD_ENV:
        env.setdefault(k, str(n))
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)
    return env


def run(a):
    env = thread_env(a.threads)
    if not a.keep_env and env != dict(os.environ):
        # The thread pools read their environment when they start: run
        # again with it.
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    torch.set_num_threads(a.threads)
    names = [n.strip() for n in a.estimators.split(",")]
    s = Stepper(a)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    commit = checkout_commit()
    load = loadavg()
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for r in range(a.warmup + a.steps):
        for j in range(len(names)):
            n = names[(j + r) % len(names)]
            c0, t0 = time.process_time(), time.perf_counter()
            s.step(n)
            t1, c1 = time.perf_counter(), time.process_time()
            if r >= a.warmup:
                wall[n].append((t1 - t0) * 1e3)
                cpu[n].append((c1 - c0) * 1e3)
    items = a.batch * (a.block_size if a.model == "gpt" else 1)
    med = {n: statistics.median(wall[n]) for n in names}
    cmed = {n: statistics.median(cpu[n]) for n in names}
    first = names[0]
    res = []
    for n in names:
        r = {"estimator": n, "step_ms_median": med[n], "step_ms": wall[n], "cpu_ms_median": cmed[n],
             "ratio_to_first": med[n] / med[first],
             "paired_ratio_to_first": statistics.median(u / v for u, v in zip(wall[n], wall[first])),
             "cpu_ratio_to_first": cmed[n] / cmed[first]}
        r["tokens_per_s" if a.model == "gpt" else "images_per_s"] = items / med[n] * 1e3
        res.append(r)
    out = {"model": a.model, "batch": a.batch, "threads": a.threads, "torch": torch.__version__,
           "env": {k: os.environ.get(k, "") for k in RUN_ENV},
           "vmap_chunk": s.chunk, "load_avg_1m": [load, loadavg()],
           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "results": res,
           "provenance": provenance(started, load, commit)}
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"torch {torch.__version__}, {a.model}, batch {a.batch}, {a.threads} threads, vmap chunk {s.chunk}")
    for r in res:
        print(f"{r['estimator']:12s} {r['step_ms_median']:9.1f} ms  CPU {r['cpu_ms_median']:9.1f} ms  "
              f"vs {first} {r['ratio_to_first']:.3f} (paired {r['paired_ratio_to_first']:.3f}, CPU {r['cpu_ratio_to_first']:.3f})")
    print(f"peak RSS {out['peak_rss_mb']:.0f} MB, load average {load:.2f} before, {loadavg():.2f} after")


# The configurations of compare: bench step's model flags (the same names in
# both programs), the batch, the steps of one run, and whether PyTorch's
# per-sample step is timed too (AlexNet's takes 35 times its SGD step: run it
# on its own with `run --estimators sgd,ps-clip-sgd`).
CONFIGS = {
    "alexnet": (["--model", "alexnet-cifar"], 64, 6, 1, False),
    "char": (["--model", "gpt", "--vocab-size", "65"], 12, 30, 2, True),
    "gpt6x384": (["--model", "gpt", "--vocab-size", "65", "--n-layer", "6", "--n-head", "6",
                  "--n-embd", "384", "--block-size", "256"], 8, 6, 1, True),
    "gpt-t1024": (["--model", "gpt", "--vocab-size", "65", "--n-layer", "4", "--n-head", "4",
                   "--n-embd", "256", "--block-size", "1024"], 4, 4, 1, True),
}


def one(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_torch compare: {' '.join(cmd)} failed: {p.stderr.strip().splitlines()[-1:]}")
    out = json.loads(p.stdout)
    return {r["estimator"]: r for r in out["results"]}


def compare(a):
    rows, medians = [], []
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    commit = a.commit or checkout_commit()
    load = loadavg()
    for cfg in a.configs.split(","):
        if cfg not in CONFIGS:
            sys.exit(f"bench_torch compare: unknown configuration {cfg!r}, want one of {', '.join(CONFIGS)}")
    print(f"# {cpu_name()}; load average {open('/proc/loadavg').read().strip()}")
    print("# config threads round | SGD step ms psclip torch (CPU ms) | throughput psclip/torch (of CPU time, of the fastest steps) | PS/SGD (of CPU time)")
    for rnd in range(a.rounds):
        for cfg in a.configs.split(","):
            flags, batch, steps, warmup, torch_ps = CONFIGS[cfg]
            common = flags + ["--batch", str(batch), "--steps", str(a.steps or steps), "--warmup", str(warmup), "--json"]
            ests = a.estimators if torch_ps else "sgd"
            for t in (int(v) for v in a.threads.split(",")):
                env = dict(os.environ if a.keep_env else thread_env(t), GOMAXPROCS=str(t))
                torch_cmd = [sys.executable, os.path.abspath(__file__), "run", "--threads", str(t), "--estimators", ests]
                if a.keep_env:
                    torch_cmd.append("--keep-env")
                runs = [("psclip", [a.psclip, "bench", "step", "--estimators", a.estimators] + common),
                        ("torch", torch_cmd + common)]
                if rnd % 2:
                    runs.reverse()
                got = {who: one(cmd, env) for who, cmd in runs}
                p, q = got["psclip"], got["torch"]
                row = {"config": cfg, "threads": t, "round": rnd,
                       "psclip_sgd_ms": p["sgd"]["step_ms_median"], "torch_sgd_ms": q["sgd"]["step_ms_median"],
                       "psclip_sgd_cpu_ms": p["sgd"]["cpu_ms_median"], "torch_sgd_cpu_ms": q["sgd"]["cpu_ms_median"]}
                row["speed"] = row["torch_sgd_ms"] / row["psclip_sgd_ms"]
                row["cpu_speed"] = row["torch_sgd_cpu_ms"] / row["psclip_sgd_cpu_ms"]
                # The fastest step of each: on a shared machine the one least
                # disturbed by other work.
                row["psclip_sgd_best_ms"] = min(p["sgd"]["step_ms"])
                row["torch_sgd_best_ms"] = min(q["sgd"]["step_ms"])
                row["best_speed"] = row["torch_sgd_best_ms"] / row["psclip_sgd_best_ms"]
                for who, res in got.items():
                    if "ps-clip-sgd" in res:
                        row[who + "_ps"] = res["ps-clip-sgd"]["ratio_to_first"]
                        row[who + "_ps_cpu"] = res["ps-clip-sgd"]["cpu_ratio_to_first"]
                rows.append(row)
                print(fmt(row), flush=True)
    print("# medians over rounds; load average now", open("/proc/loadavg").read().strip())
    for cfg in a.configs.split(","):
        for t in (int(v) for v in a.threads.split(",")):
            rs = [r for r in rows if r["config"] == cfg and r["threads"] == t]
            m = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k not in ("config", "threads", "round")}
            m = dict(m, config=cfg, threads=t, rounds=len(rs))
            medians.append(m)
            print(fmt(dict(m, round="med")))
    if a.json:
        prov = provenance(started, load, commit)
        prov["threads"] = a.threads
        with open(a.json, "w") as f:
            json.dump({"rounds": rows, "medians": medians, "provenance": prov}, f, indent=1)


def step_macs(model, x, y, loss):
    """The multiply-adds of one training step's products on the batch x, y:
    every linear and convolution layer's forward product, its weight
    gradient's and, where its input needs a gradient, its input gradient's;
    and each causal attention's two products (QKᵀ and AV) forward and
    backward, on their lower triangles only. Elementwise work,
    normalisation, softmax, pooling, the loss and the update are left out:
    no implementation of the step does fewer."""
    macs = 0

    def linear(m, inp, out):
        nonlocal macs
        rows = inp[0].numel() // m.in_features
        macs += rows * m.in_features * m.out_features * (3 if inp[0].requires_grad else 2)

    def conv(m, inp, out):
        nonlocal macs
        k = m.in_channels // m.groups * m.kernel_size[0] * m.kernel_size[1]
        macs += out.numel() * k * (3 if inp[0].requires_grad else 2)

    def attention(m, inp, out):
        nonlocal macs
        b, t, c = inp[0].shape
        macs += 3 * 2 * b * (t * (t + 1) // 2) * c

    hooks = []
    for m in model.modules():
        if isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear))
        elif isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv))
        elif type(m).__name__ == "CausalSelfAttention":
            hooks.append(m.register_forward_hook(attention))
    try:
        model(x) if loss else model(x, y)
    finally:
        for h in hooks:
            h.remove()
    return macs


def bound(a):
    """The speed over PyTorch that psclip's plain step could reach at most:
    PyTorch's step time (a compare file's medians) over the time of the
    step's products alone (step_macs) at the fastest GEMM rate measured on
    the machine with the same vector width (psclip bench gemm files, psclip's
    rate or OpenBLAS's, whichever is higher), one thread."""
    cmp = json.load(open(a.compare))
    kernel = cmp["provenance"].get("env", {}).get("PSCLIP_KERNEL", "")
    if not kernel:
        sys.exit(f"bench_torch bound: {a.compare} records no PSCLIP_KERNEL: run compare with the kernel named")
    rates = []
    for path in a.gemm:
        g = json.load(open(path))
        if g["provenance"]["threads"] != 1 or g["provenance"]["kernel"] != kernel:
            sys.exit(f"bench_torch bound: {path} ran {g['provenance']['threads']} threads of the "
                     f"{g['provenance']['kernel']} kernel, want 1 of {a.compare}'s {kernel}")
        shape = f"{g['m']}x{g['n']}x{g['k']}"
        rates.append((g["gflops"], f"psclip {g['provenance']['kernel']} {shape}", path))
        if "against" in g:
            rates.append((g["against"]["gflops"], f"{g['against']['library']} {g['against']['core']} {shape}", path))
    if not rates:
        sys.exit("bench_torch bound: no --gemm files")
    peak, peak_from, peak_file = max(rates)
    rows = []
    print(f"# fastest GEMM: {peak:.1f} GFLOP/s ({peak_from}, {peak_file})")
    print("# config   | GFLOP a step | products alone at that rate ms | PyTorch ms psclip ms | speed now, at most | psclip GFLOP/s (of the rate)")
    for m in cmp["medians"]:
        if m["threads"] != 1:
            continue
        flags, batch = CONFIGS[m["config"]][:2]
        args = parser().parse_args(["run"] + flags + ["--batch", str(batch)])
        model, x, y, loss = build(args)
        gflop = 2 * step_macs(model, x, y, loss) / 1e9
        floor = gflop / peak * 1e3
        r = {"config": m["config"], "threads": 1, "gflop_per_step": gflop, "products_ms_at_peak": floor,
             "torch_sgd_ms": m["torch_sgd_ms"], "psclip_sgd_ms": m["psclip_sgd_ms"], "speed": m["speed"],
             "max_speed": m["torch_sgd_ms"] / floor, "psclip_gflops": gflop / m["psclip_sgd_ms"] * 1e3}
        r["psclip_of_peak"] = r["psclip_gflops"] / peak
        rows.append(r)
        print(f"{r['config']:10s} | {gflop:8.2f} | {floor:8.1f} | {r['torch_sgd_ms']:8.1f} {r['psclip_sgd_ms']:8.1f} | "
              f"{r['speed']:.2f}x, {r['max_speed']:.2f}x | {r['psclip_gflops']:6.1f} ({r['psclip_of_peak']:.2f})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"peak_gflops": peak, "peak_from": peak_from, "peak_file": peak_file, "compare": a.compare,
                       "rows": rows, "provenance": provenance(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                              loadavg(), a.commit or checkout_commit())}, f, indent=1)


def fmt(r):
    s = (f"{r['config']:10s} {r['threads']} {r['round']!s:3s} | {r['psclip_sgd_ms']:7.1f} {r['torch_sgd_ms']:7.1f} "
         f"({r['psclip_sgd_cpu_ms']:7.1f} {r['torch_sgd_cpu_ms']:7.1f}) | {r['speed']:.2f}x ({r['cpu_speed']:.2f}x, "
         f"best steps {r['best_speed']:.2f}x)")
    for who in ("psclip", "torch"):
        if who + "_ps" in r:
            s += f" | {who} PS/SGD {r[who + '_ps']:.3f} ({r[who + '_ps_cpu']:.3f})"
    return s


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time steps of PyTorch")
    r.add_argument("--model", default="alexnet-cifar", choices=["alexnet-cifar", "gpt"])
    r.add_argument("--batch", type=int, default=64)
    r.add_argument("--classes", type=int, default=100)
    r.add_argument("--n-layer", type=int, default=4)
    r.add_argument("--n-head", type=int, default=4)
    r.add_argument("--n-embd", type=int, default=128)
    r.add_argument("--block-size", type=int, default=64)
    r.add_argument("--vocab-size", type=int, default=256)
    r.add_argument("--estimators", default="sgd,clip-sgd,ps-clip-sgd")
    r.add_argument("--steps", type=int, default=5)
    r.add_argument("--warmup", type=int, default=1)
    r.add_argument("--gamma", type=float, default=1.0)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--threads", type=int, default=2)
    r.add_argument("--vmap-mb", type=float, default=2048, help="memory for one chunk's per-sample gradients")
    r.add_argument("--json", action="store_true")
    r.add_argument("--keep-env", action="store_true",
                   help="leave the thread pools' environment as it is (PyTorch's defaults) instead of thread_env's")
    c = sub.add_parser("compare", help="interleave runs of psclip bench step and of this script")
    c.add_argument("--psclip", required=True, help="the psclip binary")
    c.add_argument("--configs", default="alexnet,char,gpt6x384")
    c.add_argument("--threads", default="1,2")
    c.add_argument("--rounds", type=int, default=3)
    c.add_argument("--steps", type=int, default=0, help="timed steps per run (0: the configuration's)")
    c.add_argument("--estimators", default="sgd,ps-clip-sgd")
    c.add_argument("--json", default="", help="also write every round's figures, their medians and the provenance to this file")
    c.add_argument("--keep-env", action="store_true", help="run PyTorch with its default thread pools (run --keep-env)")
    c.add_argument("--commit", default="", help="the commit to record (the binary's; default: this checkout's when it starts)")
    b = sub.add_parser("bound", help="the most psclip's plain step could gain over PyTorch's: its products alone at the fastest GEMM rate")
    b.add_argument("--compare", required=True, help="a compare --json file")
    b.add_argument("--gemm", nargs="+", default=[], help="psclip bench gemm --json files, one thread, of the kernel the compare ran")
    b.add_argument("--json", default="", help="also write the bounds and the provenance to this file")
    b.add_argument("--commit", default="", help="the commit to record (default: this checkout's)")
    return ap


def main():
    a = parser().parse_args()
    {"run": run, "compare": compare, "bound": bound}[a.cmd](a)


if __name__ == "__main__":
    main()
