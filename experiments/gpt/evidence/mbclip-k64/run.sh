#!/bin/sh
# MB-Clip at the paper's accumulation (README.md): the char GPT, AdamW,
# K = 64 micro-batches of 8 sequences, the paper's three peak learning
# rates, MB-Clip (γ = 1 on each g_j/K, nanoGPT's convention) against
# clipping once per step, 3 paired seeds. Six parts, one per learning rate
# and method, each an experiment directory of its own, OUT/P-LR-MODE, one
# background process each at GOMAXPROCS=1 training seeds 1, 2 and 3 in
# turn. Running the script again resumes every part (finished runs are read
# back, an interrupted one continues from its checkpoint); a part still
# running refuses a second process, and says so in its log.
#
#   run.sh PSCLIP OUT          start or resume (PSCLIP: the binary, built by
#                              bench/evidence/build.sh; OUT: outside git)
#   run.sh PSCLIP OUT gather   when every part has finished: OUT/all, the
#                              whole experiment (results.json, tables,
#                              figures), its runs gathered from the parts
#                              (--gather), none trained again
#
# RUN_ONLY lists the parts to start (default: all six, e.g. "P-6e-4-global").
set -eu
B=$1 OUT=$2
S="--text ${TEXT:-/work/shared/data/tinyshakespeare.txt} --n-layer 4 --n-head 4 --n-embd 128 --block-size 64
   --micro-batch 8 --accum 64 --steps 400 --warmup 40 --eval-interval 50 --eval-iters 50 --ckpt-interval 10 --seeds 3"
mkdir -p "$OUT"
if [ "${3:-}" = gather ]; then
	P=
	for lr in 6e-4 8e-4 1e-3; do for m in global micro-batch; do P="$P${P:+,}$OUT/P-$lr-$m"; done; done
	R= # a fresh gathering, or --resume one that has begun
	if [ -d "$OUT/all" ]; then R=--resume; fi
	# shellcheck disable=SC2086 # the flags are words
	GOMAXPROCS=1 "$B" experiment gpt $S --lrs 6e-4,8e-4,1e-3 --clip-modes global,micro-batch \
		--gather "$P" $R --out "$OUT/all" >"$OUT/all.out" 2>>"$OUT/all.log"
	exit
fi
for lr in 6e-4 8e-4 1e-3; do
	for m in global micro-batch; do
		D=P-$lr-$m
		case " ${RUN_ONLY:-$D} " in *" $D "*) ;; *) continue ;; esac
		R= # a fresh part, or --resume one that has begun
		if [ -d "$OUT/$D" ]; then R=--resume; fi
		echo "$(date -u +%FT%TZ) $B experiment gpt $S --lrs $lr --clip-modes $m $R --out $OUT/$D" | tr -s ' \n' ' ' >>"$OUT/commands.log"
		echo >>"$OUT/commands.log"
		# shellcheck disable=SC2086 # the flags are words
		GOMAXPROCS=1 nohup nice -n 19 "$B" experiment gpt $S --lrs $lr --clip-modes $m $R \
			--out "$OUT/$D" >>"$OUT/$D.out" 2>>"$OUT/$D.log" </dev/null &
	done
done
