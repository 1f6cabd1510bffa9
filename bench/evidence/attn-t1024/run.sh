#!/usr/bin/env bash
# run.sh BASE [ROUNDS]: the GPT 4×256 at T = 1024, one thread, PS-Clip-SGD
# step against the SGD step, with psclip built at BASE (a commit before
# the change) and at this checkout, the two builds alternated run by run,
# ROUNDS rounds (default 3). Writes base-R.json and branch-R.json here;
# each file's provenance names its commit, the CPU, the kernel and the
# load.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
base=$(git rev-parse "${1:?usage: run.sh BASE [ROUNDS]}")
rounds=${2:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git archive "$base" | tar -x -C "$tmp/src"
(cd "$tmp/src" && go build -ldflags "-X github.com/psclip/psclip/provenance.buildCommit=$base" -o "$tmp/base" ./cmd/psclip)
bench/evidence/build.sh "$tmp/branch"
for r in $(seq 1 "$rounds"); do
	for b in base branch; do
		GOMAXPROCS=1 "$tmp/$b" bench step --model gpt --vocab-size 65 --n-layer 4 --n-head 4 \
			--n-embd 256 --block-size 1024 --micro-batch 4 --estimators sgd,ps-clip-sgd \
			--steps 8 --warmup 1 --json >"$here/$b-$r.json"
	done
done
