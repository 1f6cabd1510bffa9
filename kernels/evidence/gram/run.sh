#!/usr/bin/env bash
# Reproduces kernels/evidence/gram/: the Gram kernels' rate per
# multiply-add against Sgemm's (go test -bench GramRate), and the char GPT's
# per-sample step over its SGD step (psclip bench step), each for the code
# before the change (BASE) and after it (this checkout), the two alternated
# round by round in one run, one thread.
#
#	kernels/evidence/gram/run.sh                 # ROUNDS=10, BASE=35e313d
#	ROUNDS=10 kernels/evidence/gram/run.sh
#
# Writes bench-old.txt, bench-new.txt and benchstat.txt (when benchstat is
# installed: go install golang.org/x/perf/cmd/benchstat@latest), one
# step-<old|new>-<round>.json per round (each with its provenance) and
# results.json (the rounds' ratios, their medians, the load).
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=kernels/evidence/gram
base=${BASE:-35e313d}
rounds=${ROUNDS:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The old tree, with this checkout's benchmark (its tests use only what
# both trees have).
mkdir "$tmp/old"
git archive "$base" | tar -x -C "$tmp/old"
cp kernels/gram_test.go kernels/cputime_linux_test.go kernels/cputime_other_test.go "$tmp/old/kernels/"
rev=$(git rev-parse HEAD)
git diff --quiet HEAD -- || rev+="+dirty"
oldrev=$(git rev-parse "$base")
go test -c -o "$tmp/kernels-new.test" ./kernels
go build -ldflags "-X github.com/psclip/psclip/provenance.buildCommit=$rev" -o "$tmp/psclip-new" ./cmd/psclip
(cd "$tmp/old" && GOFLAGS=-buildvcs=false go test -c -o "$tmp/kernels-old.test" ./kernels &&
	GOFLAGS=-buildvcs=false go build -ldflags "-X github.com/psclip/psclip/provenance.buildCommit=$oldrev" -o "$tmp/psclip-old" ./cmd/psclip)

export GOMAXPROCS=1
rm -f "$out"/bench-*.txt "$out"/step-*.json
for ((r = 1; r <= rounds; r++)); do
	# Alternate which goes first.
	order=(old new)
	((r % 2 == 0)) && order=(new old)
	for v in "${order[@]}"; do
		(cd kernels && "$tmp/kernels-$v.test" -test.run '^$' -test.bench GramRate -test.cpu 1 -test.benchtime 300ms) >>"$out/bench-$v.txt"
	done
	for v in "${order[@]}"; do
		"$tmp/psclip-$v" bench step --model gpt --vocab-size 65 --batch 12 --estimators sgd,ps-clip-sgd --steps 9 --json >"$out/step-$v-$r.json"
	done
	echo "round $r/$rounds done" >&2
done
if command -v benchstat >/dev/null; then
	(cd "$out" && benchstat bench-old.txt bench-new.txt >benchstat.txt)
fi

# results.json: each round's PS/SGD ratios (wall clock, paired within the
# round, and CPU time) for old and new, their medians and the paired
# comparison of new against old over the rounds, the rates' medians per
# benchmark, and the provenance of the first round's step runs (new; base:
# the old binary's).
python3 - "$out" "$rounds" "$base" "$rev" <<'PY'
import json, re, statistics, sys
out, rounds, base, rev = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
res = {"base": base, "commit": rev, "rounds": []}
for r in range(1, rounds + 1):
    row = {"round": r}
    for v in ("old", "new"):
        d = json.load(open(f"{out}/step-{v}-{r}.json"))
        ps = [x for x in d["results"] if x["estimator"] == "ps-clip-sgd"][0]
        row[v] = {"paired_ratio": ps["paired_ratio_to_first"], "cpu_ratio": ps["cpu_ratio_to_first"],
                  "load": d["provenance"]["load_before"], "kernel": d["provenance"]["kernel"], "cpu": d["provenance"]["cpu"]}
    res["rounds"].append(row)
med = lambda v, k: statistics.median(x[v][k] for x in res["rounds"])
res["median"] = {v: {k: med(v, k) for k in ("paired_ratio", "cpu_ratio")} for v in ("old", "new")}
# new − old per round, as internal/stats.Pair reports it: mean, sd, 95 %
# Student t interval, sign count.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086]
def pair(k):
    d = [x["new"][k] - x["old"][k] for x in res["rounds"]]
    n, m = len(d), statistics.mean(d)
    sd = statistics.stdev(d) if n > 1 else float("nan")
    h = T975[n - 2] * sd / n ** 0.5 if 1 < n <= len(T975) + 1 else float("nan")
    return {"n": n, "mean": m, "sd": sd, "ci95": [m - h, m + h], "positive": sum(x > 0 for x in d), "negative": sum(x < 0 for x in d)}
res["paired_new_minus_old"] = {k: pair(k) for k in ("paired_ratio", "cpu_ratio")}
rates = {}
for v in ("old", "new"):
    for line in open(f"{out}/bench-{v}.txt"):
        m = re.match(r"BenchmarkGramRate/(\S+?)(-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) GMAC/s(?:\s+([\d.]+) cpu-GMAC/s)?", line)
        if m:
            e = rates.setdefault(m.group(1), {}).setdefault(v, {"gmac": [], "cpu_gmac": []})
            e["gmac"].append(float(m.group(3)))
            if m.group(4):
                e["cpu_gmac"].append(float(m.group(4)))
res["provenance"] = json.load(open(f"{out}/step-new-1.json"))["provenance"]
res["provenance_base"] = json.load(open(f"{out}/step-old-1.json"))["provenance"]
res["rates_median"] = {k: {v: {m: statistics.median(x) for m, x in e.items() if x} for v, e in vs.items()} for k, vs in rates.items()}
json.dump(res, open(f"{out}/results.json", "w"), indent=1)
print(json.dumps({"median": res["median"], "paired_new_minus_old": res["paired_new_minus_old"]}, indent=1))
PY
