"""A vectorised NumPy implementation of `psclip quadratic`, the speed
reference for it (issue 15), and a command that times both in one run.

The experiment is the one README.md defines: minimise ½|x|² + ⟨x, ξ⟩ in
R^d (d = 10) from x₁ ~ N(0, I), batch n = 64, T = 2000 steps of η = 0.01,
noise components ±P with P Pareto of scale 1 and shape p (P = exp(E/p), E
standard exponential) and a fair random sign; every method of a (p, run)
starts from the same x₁ and sees the same noise. Methods: Clip-SGD
(min(1, γ/|ḡ|)·ḡ, γ = 1), PS-Clip-SGD ((1/n) Σ_k min(1, τ_k/|g_k|)·g_k with
τ_k = α·k^(1/β), α = β = 1) and normalized SGD (ḡ/|ḡ|). The table is the
minimum and the mean over t of the run-averaged |x_t|, t = 1..T.

All p values and runs advance together: one step is a handful of array
operations on (p, run, sample, coordinate) arrays, so the Python overhead
is a few hundred microseconds per step and the time is NumPy's. NumPy's
random streams are not Go's, so the numbers agree with psclip's only
statistically (the spread of a 10-run experiment is in README.md).

    python3 quadratic_numpy.py run --runs 10          # the table
    python3 quadratic_numpy.py compare --psclip BIN --runs 100 --repeat 3

`compare` alternates `BIN quadratic --runs R` and this implementation,
--repeat times each, and prints every run's wall and CPU seconds and the
ratio of the medians. Run it with one thread for NumPy (it uses no BLAS
here; OMP/OPENBLAS_NUM_THREADS=1 is set anyway).
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

METHODS = ("clip-sgd", "ps-clip-sgd", "nsgd")
LABELS = {"clip-sgd": "Clip-SGD", "ps-clip-sgd": "PS-Clip-SGD", "nsgd": "Normalized SGD"}


def run(ps, runs, T=2000, n=64, d=10, eta=0.01, gamma=1.0, alpha=1.0, beta=1.0, seed=1):
    """Return {method: curve}, curve[t, i] the mean over runs of |x_t| at ps[i]."""
    rng = np.random.default_rng(seed)
    inv_p = (1.0 / np.asarray(ps, dtype=np.float64)).reshape(-1, 1, 1, 1)
    shape = (len(ps), runs, n, d)
    tau = alpha * np.arange(1, n + 1, dtype=np.float64) ** (1.0 / beta)
    x1 = rng.standard_normal((len(ps), runs, d))
    x = {m: x1.copy() for m in METHODS}
    curves = {m: np.empty((T, len(ps))) for m in METHODS}
    xi = np.empty(shape)
    for t in range(T):
        # ξ = ±exp(E/p): one exponential per value, one random bit per sign.
        rng.standard_exponential(shape, out=xi)
        xi *= inv_p
        np.exp(xi, out=xi)
        neg = np.unpackbits(np.frombuffer(rng.bytes(xi.size // 8 + 1), dtype=np.uint8))[: xi.size]
        np.negative(xi, out=xi, where=neg.reshape(shape).view(bool))
        mean = xi.mean(axis=2)  # (p, run, d)
        for m in METHODS:
            xm = x[m]
            curves[m][t] = np.linalg.norm(xm, axis=-1).mean(axis=1)
            if m == "ps-clip-sgd":
                y = xi + xm[:, :, None, :]  # per-sample gradients x + ξ_k
                norms = np.sqrt(np.einsum("prnd,prnd->prn", y, y))
                w = np.minimum(1.0, tau / norms) / n
                direction = np.einsum("prn,prnd->prd", w, y)
            else:
                g = xm + mean
                gn = np.linalg.norm(g, axis=-1, keepdims=True)
                direction = g * (np.minimum(1.0, gamma / gn) if m == "clip-sgd" else 1.0 / gn)
            xm -= eta * direction
    return curves


def table(ps, curves):
    lines = ["noise    algorithm       min |∇F(x_t)|  avg |∇F(x_t)|"]
    for i, p in enumerate(ps):
        for j, m in enumerate(METHODS):
            c = curves[m][:, i]
            head = f"p = {p:<4}" if j == 0 else " " * 8
            lines.append(f"{head} {LABELS[m]:<15} {c.min():<14.4f} {c.mean():.4f}")
    return "\n".join(lines)


def cmd_run(args):
    curves = run(args.p, args.runs, T=args.T, seed=args.seed)
    print(table(args.p, curves))


def timed(f):
    """Wall and CPU seconds of f() (CPU: this process and its children)."""
    def cpu():
        s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime
    c0, w0 = cpu(), time.perf_counter()
    f()
    return time.perf_counter() - w0, cpu() - c0


def cmd_compare(args):
    cmd = [args.psclip, "quadratic", "--runs", str(args.runs), "--seed", str(args.seed),
           "--p", ",".join(map(str, args.p))]
    go, py = [], []
    for i in range(args.repeat):
        go.append(timed(lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)))
        py.append(timed(lambda: run(args.p, args.runs, seed=args.seed)))
        print(f"round {i + 1}: psclip {go[-1][0]:.2f} s wall {go[-1][1]:.2f} s CPU, "
              f"numpy {py[-1][0]:.2f} s wall {py[-1][1]:.2f} s CPU", flush=True)
    gw, gc = statistics.median(w for w, _ in go), statistics.median(c for _, c in go)
    pw, pc = statistics.median(w for w, _ in py), statistics.median(c for _, c in py)
    print(f"median: psclip {gw:.2f} s wall {gc:.2f} s CPU, numpy {pw:.2f} s wall {pc:.2f} s CPU")
    print(f"numpy/psclip: {pw / gw:.1f}x wall, {pc / gc:.1f}x CPU")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, f in (("run", cmd_run), ("compare", cmd_compare)):
        s = sub.add_parser(name)
        s.set_defaults(f=f)
        s.add_argument("--p", type=lambda v: [float(x) for x in v.split(",")], default=[1.8, 1.5, 1.2])
        s.add_argument("--runs", type=int, default=10 if name == "run" else 100)
        s.add_argument("--seed", type=int, default=1)
        if name == "run":
            s.add_argument("--T", type=int, default=2000)
        else:
            s.add_argument("--psclip", required=True, help="the psclip binary")
            s.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    args.f(args)


if __name__ == "__main__":
    sys.exit(main())
