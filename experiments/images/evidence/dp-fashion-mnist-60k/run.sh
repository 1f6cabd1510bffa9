#!/bin/sh
# Tramèr & Boneh's tanh CNN on all 60,000 Fashion-MNIST training images
# (--val-fraction 0, their N), secret Poisson sampling, their settings
# (σ = 2.15, C = 0.1, expected batch 2048, lr 4, momentum 0.9, no weight
# decay, 40 epochs = 1,200 steps, δ = 1e-5), and private adaptive clipping
# at the same σ, q and steps (so the same ε). One thread a run, lowest
# priority, runs one after another.
#
# Usage: run.sh PSCLIP OUT fixed             seeds 1-3, the paper's settings: OUT/fixed/seedN
#        run.sh PSCLIP OUT pilot             the adaptive (q, lr) grid, 10 epochs, seed 1, on a
#                                            validation split (tuning runs, not private): OUT/pilot/qQ-lrLR
#        run.sh PSCLIP OUT adaptive Q LR     seeds 1-3 with the pilot's choice: OUT/adaptive/seedN
# Rerun the same line to resume: a run with a checkpoint continues (--resume:
# fresh secret samples and noise, the same accounting), a finished one
# (result.json) is skipped.
set -eu
bin=$(realpath "$1")
out=$2
what=$3
tb="--data /usr/share/datasets/fashion-mnist --model tanh-cnn --estimator dp-sgd --clip 0.1
	--noise-multiplier 2.15 --delta 1e-5 --batch 2048 --momentum 0.9 --weight-decay 0"
one() { # one DIR FLAGS...: start or resume one run
	d=$1
	shift
	[ -f "$d/result.json" ] && return 0
	r=""
	[ -f "$d/ckpt.safetensors" ] && r="--resume"
	mkdir -p "$(dirname "$d")"
	# shellcheck disable=SC2086 # $tb is words
	GOMAXPROCS=1 nice -n 19 "$bin" train images $tb "$@" --out "$d" $r >>"$d.out" 2>>"$d.err"
}
case $what in
fixed)
	for s in 1 2 3; do one "$out/fixed/seed$s" --lr 4 --epochs 40 --val-fraction 0 --seed $s; done ;;
pilot)
	for g in "0.1 0.5" "0.1 2" "0.5 0.5" "0.5 0.1"; do
		set -- $g
		one "$out/pilot/q$1-lr$2" --target-quantile "$1" --lr "$2" --epochs 10 --val-fraction 0.1 --seed 1 --release-unprotected
	done ;;
adaptive)
	for s in 1 2 3; do one "$out/adaptive/seed$s" --target-quantile "$4" --lr "$5" --epochs 40 --val-fraction 0 --seed $s; done ;;
*)
	echo "run.sh: fixed, pilot or adaptive" >&2
	exit 2 ;;
esac
