#!/bin/sh
# Tramèr & Boneh's ScatterNet heads on all 60,000 Fashion-MNIST training
# images (--val-fraction 0, their N) with DP-SGD at ε = 3, δ = 1e-5: secret
# Poisson sampling, σ from --target-epsilon for the 40 epochs run, C = 0.1,
# SGD momentum 0.9, no weight decay; the linear head at batch 8192 and lr 16,
# the CNN head at batch 2048 and lr 4 (their settings); seeds 1–3. Each run
# also reports the mean of its weights over the last quarter of its steps
# (--average-steps: 80 of 320, 300 of 1,200; post-processing). The six runs
# go side by side, one thread each at the lowest priority, 20 s apart (each
# holds the 1.1 GB of features, twice while it reads them; GOGC=25 keeps
# the heap near them); the scattering
# features are computed once, by the first run, into OUT/cache, which the
# others wait for.
#
# Usage: run.sh PSCLIP OUT [linear] [cnn]. Rerun to resume: a seed with a
# checkpoint continues (--resume: fresh secret samples and noise, the same
# accounting), a finished seed (result.json) is skipped.
set -eu
bin=$(realpath "$1")
mkdir -p "$2"
cd "$2"
shift 2
one() { # model batch lr average-steps seed: one run, in a subshell
	m=$1 b=$2 lr=$3 avg=$4 s=$5
	(
		d=$m/seed$s
		[ -f $d/result.json ] && exit 0
		r=""
		[ -f $d/ckpt.safetensors ] && r="--resume"
		mkdir -p $m
		GOMAXPROCS=1 GOGC=25 nice -n 19 "$bin" train images --data /usr/share/datasets/fashion-mnist \
			--features scatter --features-cache cache --model scatter-$m \
			--estimator dp-sgd --clip 0.1 --target-epsilon 3 --delta 1e-5 --batch $b --lr $lr \
			--momentum 0.9 --weight-decay 0 --epochs 40 --val-fraction 0 --average-steps $avg --seed $s --out $d $r \
			>>$d.out 2>>$d.err
	)
}
first=""
for m in ${*:-linear cnn}; do
	for s in 1 2 3; do
		while [ -n "$first" ] && ! ls cache/scatter-*.safetensors >/dev/null 2>&1; do sleep 30; done
		case $m in
		linear) one linear 8192 16 80 $s & ;;
		cnn) one cnn 2048 4 300 $s & ;;
		esac
		first=$m$s
		sleep 20
	done
done
wait
