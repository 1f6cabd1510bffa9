#!/usr/bin/env bash
# Reproduces the speed evidence under bench/evidence/: the per-sample step
# over the plain step and their peak memory (step/), the DP-SGD step over
# the per-sample step (step/<model>-dp.json), the DP noise alone against
# its previous version (noise/bench.txt, only when asked), the same under
# per-sample memory budgets (budget/; the default budget's in
# budget/<model>-default.json), psclip's GEMM against
# OpenBLAS's (gemm/) and psclip against PyTorch (torch/). Every file carries
# its provenance: command, commit, CPU, kernel, threads, load before and
# after.
#
# Needs Go, and for gemm/ and torch/ Debian's libopenblas-dev and
# python3-torch (apt-get install -y libopenblas-dev python3-torch). Runs
# short (a few minutes on two cores) and one thread, so that it can share a
# machine; the load it saw is in every file. Run it from anywhere:
#
#	bench/evidence/run.sh            # everything
#	bench/evidence/run.sh step gemm  # some parts
#	KERNEL=avx2 bench/evidence/run.sh gemm  # AVX2 against Haswell on an AVX-512 CPU
set -euo pipefail
cd "$(dirname "$0")/../.."
out=bench/evidence
# OpenBLAS and oneDNN choose their kernels by the CPU unless told
# otherwise: let them, and record which OpenBLAS chose (provenance's
# kernel, against.core); bench_torch.py sets glibc's malloc for PyTorch.
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE ONEDNN_MAX_CPU_ISA GLIBC_TUNABLES
# KERNEL=avx2 forces psclip's AVX2 micro-kernel (PSCLIP_KERNEL),
# OpenBLAS's Haswell core and oneDNN's AVX2 code (PyTorch's convolutions)
# on an AVX-512 machine: the comparison an AVX2-only machine makes,
# recorded as such (provenance.kernel, provenance.env, against.core).
# KERNEL=avx512 names the files for psclip's AVX-512 kernel (a CPU
# without it runs its best; provenance.kernel says which); OpenBLAS picks
# its core by the CPU.
case ${KERNEL:-} in
"") ;;
avx2) export PSCLIP_KERNEL=avx2 OPENBLAS_CORETYPE=Haswell ONEDNN_MAX_CPU_ISA=AVX2 ;;
avx512) export PSCLIP_KERNEL=avx512 ;;
*)
	echo "run.sh: KERNEL=$KERNEL: want avx2 or avx512" >&2
	exit 2
	;;
esac
# Evidence names the commit it was made from: a tree whose tracked files
# differ from it would make that "+dirty", which nobody can check out.
# The commit is taken once, before the first part writes a tracked file.
if ! git diff --quiet HEAD --; then
	echo "run.sh: tracked files differ from HEAD: commit them first (the files record the commit)" >&2
	exit 2
fi
commit=$(git rev-parse HEAD)
bin=$(mktemp -d)/psclip
trap 'rm -rf "$(dirname "$bin")"' EXIT
# One binary, with OpenBLAS linked in for gemm/ (psclip's own code is the
# same as in the default pure-Go build).
CGO_ENABLED=1 bench/evidence/build.sh "$bin" -tags openblas
threads=${THREADS:-1}
export GOMAXPROCS=$threads

# The models and shapes of README's speed table: bench step's flags.
alexnet=(--model alexnet-cifar --micro-batch 64)
char=(--model gpt --vocab-size 65 --micro-batch 12)
gpt6x384=(--model gpt --vocab-size 65 --n-layer 6 --n-head 6 --n-embd 384 --block-size 256 --micro-batch 8)

step() {
	mkdir -p "$out/step"
	local name
	for name in alexnet char gpt6x384; do
		local -n flags=$name
		# PS-Clip-SGD and SGD interleaved in one process: the ratio, with
		# each layer's own rule (the default budget is default's).
		"$bin" bench step "${flags[@]}" --persample-memory auto --estimators sgd,ps-clip-sgd --steps "${STEPS:-5}" --json >"$out/step/$name.json"
		# Peak memory: one estimator per process.
		"$bin" bench step "${flags[@]}" --estimators sgd --steps 2 --json >"$out/step/$name-memory-sgd.json"
		"$bin" bench step "${flags[@]}" --persample-memory auto --estimators ps-clip-sgd --steps 2 --json >"$out/step/$name-memory-ps-clip-sgd.json"
	done
	# MB-Clip against global clipping at 8 micro-batches of the char GPT.
	"$bin" bench step "${char[@]}" --accum 8 --clip-modes global,micro-batch --steps "${MBSTEPS:-20}" --json >"$out/step/char-accum8.json"
	# LoRA fine-tuning of the char GPT (with biases, as train gpt --init
	# reads it): rank 8 on attn.c_attn, the per-sample step against the plain.
	"$bin" bench step "${char[@]}" --bias --lora-rank 8 --estimators sgd,ps-clip-sgd --steps "${LORASTEPS:-60}" --json >"$out/step/char-lora.json"
}

# dp: DP-SGD's step (secure noise) against the per-sample step it adds the
# noise to, interleaved in one process; at $THREADS threads, and at two
# (<model>-dp-2threads.json), where the noise's blocks are drawn on both.
dp() {
	mkdir -p "$out/step"
	local name
	for name in alexnet char gpt6x384; do
		local -n flags=$name
		"$bin" bench step "${flags[@]}" --estimators ps-clip-sgd,dp-sgd --steps "${STEPS:-5}" --json >"$out/step/$name-dp.json"
		GOMAXPROCS=2 "$bin" bench step "${flags[@]}" --estimators ps-clip-sgd,dp-sgd --steps "${STEPS:-5}" --json >"$out/step/$name-dp-2threads.json"
	done
}

# noise: DP-SGD's noise alone, one thread, CPU time (go test benchmarks):
# the AES-128-CTR keystream (kernels.AESCTR on each implementation this CPU
# runs, beside crypto/cipher's CTR, which the noise read before), the
# ziggurat's fast path (kernels.ZigguratAdd), and the whole noise of 1M and
# 10.7M values with a copy of the same bytes (estimator's
# BenchmarkGaussianAdd) of this tree and of commit $NOISE_BEFORE (by
# default the last before the carry-free VAES loop, the 4 KiB slow-path
# buffer and the inlined wedge bounds; 319df9f562d6 is the last before
# AESCTR), the two test binaries alternated three times. One file,
# noise/bench.txt, its provenance in its first lines.
noise() {
	mkdir -p "$out/noise"
	local before=${NOISE_BEFORE:-d8c07af8e78889ecc49da389b97172c98231a45d} tmp rev i side
	tmp=$(mktemp -d)
	git archive "$before" | tar -x -C "$tmp"
	(cd "$tmp" && go test -c -o "$tmp/before.test" ./estimator)
	go test -c -o "$tmp/after.test" ./estimator
	go test -c -o "$tmp/kernels.test" ./kernels
	rev=$(git rev-parse HEAD)
	git diff --quiet HEAD -- || rev+="+dirty"
	{
		echo "# command: bench/evidence/run.sh noise"
		echo "# commit: $rev (before: $(git rev-parse "$before"))"
		echo "# cpu:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); kernel: ${PSCLIP_KERNEL:-detected}; GOMAXPROCS=$threads; cpus: $(nproc)"
		echo "# load_before: $(cut -d' ' -f1 /proc/loadavg); started: $(date -u +%FT%TZ)"
		"$tmp/kernels.test" -test.run '^$' -test.bench 'AESCTR|ZigguratAdd' -test.count 3
		for i in 1 2 3; do
			for side in before after; do
				echo "## $side"
				(cd estimator && "$tmp/$side.test" -test.run '^$' -test.bench 'GaussianAdd/(noise|copy)/(1048576|10700000)$' -test.benchtime 20x)
			done
		done
		echo "# load_after: $(cut -d' ' -f1 /proc/loadavg); finished: $(date -u +%FT%TZ)"
	} >"$out/noise/bench.txt"
	rm -rf "$tmp"
}

# budget: the per-sample step's time and peak memory under per-sample
# memory budgets (--persample-memory), one process a point, for the three
# GPT shapes; the plain step's peak memory from one process of its own.
gpt1024=(--model gpt --vocab-size 65 --n-layer 4 --n-head 4 --n-embd 256 --block-size 1024 --micro-batch 4)
budget() {
	mkdir -p "$out/budget"
	local name b
	for name in char gpt6x384 gpt1024; do
		local -n flags=$name
		"$bin" bench step "${flags[@]}" --estimators sgd --steps 2 --json >"$out/budget/$name-sgd.json"
		local budgets=(none auto)
		case $name in
		char) budgets+=(16MiB 1GiB) ;;
		gpt6x384) budgets+=(64MiB 128MiB 192MiB 256MiB 1GiB) ;;
		*) budgets+=(1GiB) ;;
		esac
		for b in "${budgets[@]}"; do
			"$bin" bench step "${flags[@]}" --estimators sgd,ps-clip-sgd --persample-memory "$b" --steps "${STEPS:-5}" --json >"$out/budget/$name-$b.json"
		done
	done
}

# default: the per-sample step at the default budget (per-sample gradients
# up to 0.3 times the plain step's memory, as bench step measures it)
# against the plain step, interleaved in one process, with the memory each
# holds over the plain step's (results[].memory_ratio), for the models of
# README's speed table.
default() {
	mkdir -p "$out/budget"
	local name
	for name in alexnet char gpt6x384; do
		local -n flags=$name
		"$bin" bench step "${flags[@]}" --estimators sgd,ps-clip-sgd --steps "${STEPS:-5}" --json >"$out/budget/$name-default.json"
	done
}

# gemm/ holds the AVX2-against-Haswell comparison (and a run without
# KERNEL); KERNEL=avx512's goes to gemm/avx512/.
gemmdir=$out/gemm${KERNEL:+/$KERNEL}
[ "${KERNEL:-}" != avx2 ] || gemmdir=$out/gemm

gemm() {
	mkdir -p "$gemmdir"
	# name m n k trans-a trans-b: the square product and the largest product
	# of each model (kernels/bench_test.go's modelShapes).
	local shapes=(
		"square-1024 1024 1024 1024 false false"
		"alexnet-fc1-fwd 64 4096 9216 false true"
		"alexnet-conv2-fwd 192 256 1600 false false"
		"gpt384-qkv-fwd 3072 1152 384 false true"
		"gpt128-qkv-fwd 768 384 128 false true"
	)
	local s
	for s in "${shapes[@]}"; do
		read -r name m n k ta tb <<<"$s"
		"$bin" bench gemm --m "$m" --n "$n" --k "$k" --trans-a="$ta" --trans-b="$tb" \
			--threads "$threads" --runs "${RUNS:-9}" --against openblas --json >"$gemmdir/$name.json"
	done
}

# torch: psclip's step against PyTorch's; with KERNEL set, into
# torch/compare-$KERNEL.* for the plain step alone (ESTIMATORS=sgd), else
# torch/compare-$KERNEL-ps.* (the per-sample step too: each side's steps
# alternate, which moves the plain step's time too, so the plain step's
# comparison is timed alone).
torch() {
	mkdir -p "$out/torch"
	local name=compare${KERNEL:+-$KERNEL}
	[ -z "${KERNEL:-}" ] || [ "${ESTIMATORS:-}" = sgd ] || name+=-ps
	# The table into the build's directory first: a tracked file written
	# while the comparison runs would make its provenance's commit dirty.
	local txt
	txt=$(dirname "$bin")/$name.txt
	/usr/bin/python3 experiments/reference/bench_torch.py compare --psclip "$bin" \
		--configs "${CONFIGS:-char,alexnet,gpt6x384}" --threads "$threads" --rounds "${ROUNDS:-2}" \
		--estimators "${ESTIMATORS:-sgd,ps-clip-sgd}" --commit "$commit" --json "$out/torch/$name.json" | tee "$txt"
	cp "$txt" "$out/torch/$name.txt"
}

# bound: the most psclip's plain step could gain over PyTorch's, from
# torch/compare-$KERNEL.json and the same kernel's gemm/ files: PyTorch's
# step time over the step's products alone at the fastest GEMM rate
# measured (torch/bound-$KERNEL.*). Times nothing; needs KERNEL.
bound() {
	if [ -z "${KERNEL:-}" ]; then
		echo "run.sh bound: set KERNEL (avx2 or avx512)" >&2
		exit 2
	fi
	local txt
	txt=$(dirname "$bin")/bound-$KERNEL.txt
	/usr/bin/python3 experiments/reference/bench_torch.py bound --compare "$out/torch/compare-$KERNEL.json" \
		--gemm "$gemmdir"/*.json --commit "$commit" --json "$out/torch/bound-$KERNEL.json" | tee "$txt"
	cp "$txt" "$out/torch/bound-$KERNEL.txt"
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(step dp budget default gemm torch)
for p in "${parts[@]}"; do
	case $p in
	step | dp | noise | budget | default | gemm | torch | bound) "$p" ;;
	*)
		echo "run.sh: unknown part $p (want step, dp, noise, budget, default, gemm, torch, bound)" >&2
		exit 2
		;;
	esac
done
