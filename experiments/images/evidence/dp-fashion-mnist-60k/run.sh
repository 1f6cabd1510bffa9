#!/bin/sh
# Tramèr & Boneh's tanh CNN on all 60,000 Fashion-MNIST training images
# (--val-fraction 0, their N), secret Poisson sampling, the paper's settings
# (σ = 2.15, C = 0.1, batch 2048, lr 4, momentum 0.9, no weight decay, 40
# epochs), seeds 1–3, one thread each at the lowest priority.
#
# Usage: run.sh PSCLIP OUT. Rerun to resume: a seed with a checkpoint
# continues (--resume: fresh secret samples and noise, the same accounting),
# a finished seed (result.json) is skipped.
set -eu
bin=$(realpath "$1")
mkdir -p "$2"
cd "$2"
for s in 1 2 3; do
	[ -f seed$s/result.json ] && continue
	r=""
	[ -f seed$s/ckpt.safetensors ] && r="--resume"
	GOMAXPROCS=1 nohup nice -n 19 "$bin" train images --data /usr/share/datasets/fashion-mnist --model tanh-cnn \
		--estimator dp-sgd --clip 0.1 --noise-multiplier 2.15 --delta 1e-5 --batch 2048 --lr 4 \
		--momentum 0.9 --weight-decay 0 --epochs 40 --val-fraction 0 --seed $s --out seed$s $r \
		>>seed$s.out 2>>seed$s.err &
done
wait
