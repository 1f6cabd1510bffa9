#!/bin/sh
# The fine-tuning study (README.md in this directory): the char GPT
# pretrained on the first 80 % of tiny Shakespeare, then fine-tuned on the
# held-out last 20 % by full fine-tuning, LoRA, and DP-LoRA at ε = 8 and
# ε = 3, seeds 1, 2 and 3; every checkpoint's loss on the held-out text's
# validation split by eval gpt. Four background lanes after the
# pretraining (full; DP-LoRA at ε = 8; at ε = 3; LoRA), one thread each at
# nice 19.
# Running the script again resumes every unfinished run from its
# checkpoint and skips finished ones (a run with result.json, an eval with
# its JSON).
#
#   run.sh PSCLIP OUT    start or resume (PSCLIP: the binary, built by
#                        bench/evidence/build.sh; OUT: outside git)
#   go run experiments/gpt/evidence/finetune/results.go OUT > experiments/gpt/evidence/finetune/results.json
#                        when every run has finished
set -eu
B=$1 OUT=$2
TEXT=${TEXT:-data/text/testdata/tinyshakespeare.txt}
export GOMAXPROCS=1
mkdir -p "$OUT"
# 1,115,394 bytes: the first 892,315 (80 %) to pretrain on, the rest held
# out. Bytes as tokens (--vocab byte), so that both parts have the same ids.
[ -f "$OUT/pretrain.txt" ] || head -c 892315 "$TEXT" >"$OUT/pretrain.txt"
[ -f "$OUT/finetune.txt" ] || tail -c +892316 "$TEXT" >"$OUT/finetune.txt"
MODEL="--vocab byte --bias --n-layer 4 --n-head 4 --n-embd 128 --block-size 64"
LORA="--lora-rank 8 --lora-alpha 16 --lora-targets attn,proj,fc,mlp-proj"
FT="--text $OUT/finetune.txt --vocab byte --init $OUT/pretrain-hf --micro-batch 16 --accum 4 --steps 200 --warmup 20 --eval-interval 20 --eval-iters 20 --ckpt-interval 50"

# train NAME FLAGS...: runs (or resumes) OUT/NAME unless it has finished,
# its CPU time in OUT/NAME.time, then evaluates its checkpoint on the
# held-out validation split into OUT/NAME.eval.json.
train() {
	name=$1
	shift
	if [ ! -f "$OUT/$name/result.json" ]; then
		R=
		if [ -f "$OUT/$name/ckpt.safetensors" ]; then R=--resume; fi
		echo "$(date -u +%FT%TZ) $B train gpt $* $R --out $OUT/$name" >>"$OUT/commands.log"
		# shellcheck disable=SC2086 # R is a flag or nothing
		/usr/bin/time -f "%U %S" -o "$OUT/$name.time" nice -n 19 "$B" train gpt "$@" $R --out "$OUT/$name" >"$OUT/$name.out" 2>>"$OUT/$name.log"
	fi
	evaluate "$name"
}

# evaluate NAME: the loss of OUT/NAME's checkpoint on the fine-tuning
# text's validation split, 100 batches of each of two draws.
evaluate() {
	[ -f "$OUT/$1.eval.json" ] && return 0
	echo "$(date -u +%FT%TZ) $B eval gpt --ckpt $OUT/$1 --text $OUT/finetune.txt --vocab byte --splits val --eval-iters 100 --seeds 1,2 --json" >>"$OUT/commands.log"
	nice -n 19 "$B" eval gpt --ckpt "$OUT/$1" --text "$OUT/finetune.txt" --vocab byte --splits val --eval-iters 100 --seeds 1,2 --json >"$OUT/$1.eval.tmp" 2>>"$OUT/$1.log"
	mv "$OUT/$1.eval.tmp" "$OUT/$1.eval.json"
}

# nanoGPT's Shakespeare recipe (train gpt's defaults: 2000 steps of 12
# sequences, learning rate 1e-3 to 1e-4), with biases for GPT-2's layout.
# shellcheck disable=SC2086
train pretrain --text "$OUT/pretrain.txt" $MODEL
[ -d "$OUT/pretrain-hf" ] || "$B" export gpt2 --ckpt "$OUT/pretrain" --out "$OUT/pretrain-hf" >>"$OUT/commands.log"

# shellcheck disable=SC2086
lane1() {
	for S in 1 2 3; do
		train "full-$S" $FT --seed $S --lr 3e-4 --clip-mode global --clip 1
	done
}
# shellcheck disable=SC2086
lane4() {
	for S in 1 2 3; do
		train "lora-$S" $FT --seed $S --lr 2e-3 --clip-mode global --clip 1 $LORA
	done
}
# The noise is seeded (--noise-seed), so that the study reproduces; a
# private run draws it from a secret instead, at the same σ.
# shellcheck disable=SC2086
dplora() {
	for S in 1 2 3; do
		train "dp-lora-eps$1-$S" $FT --seed $S --noise-seed $S --lr 2e-3 --clip-mode per-sample --ps-estimator dp-sgd --clip 1 \
			--target-epsilon $1 --delta 1e-5 $LORA
	done
}
lane2() { dplora 8; }
lane3() { dplora 3; }
# LANES, if set, lists the lanes to run (default: all four).
for L in ${LANES:-1 2 3 4}; do
	lane$L &
done
wait
