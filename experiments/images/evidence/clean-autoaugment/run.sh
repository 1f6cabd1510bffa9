#!/bin/sh
# The clean-image study (README.md): AlexNet on clean Fashion-MNIST with the
# paper's recipe, with AutoAugment and with crop and flip only. One
# background process per augmentation and method, each an experiment
# directory of its own, OUT/ARM/METHOD, training seeds 1, 2 and 3 in turn.
# Running the script again resumes every unfinished run from its checkpoint
# and reads finished ones back; it starts nothing that is still running (a
# second process on a directory is refused, and says so in its log).
#
#   run.sh PSCLIP OUT          start or resume (PSCLIP: the binary; OUT: outside git)
#   run.sh PSCLIP OUT merge    when every run has finished: OUT/ARM/all, the
#                              experiment over all methods (results.json,
#                              tables, figures), gathering the parts' runs
#                              (--gather: read back, not trained again)
set -eu
B=$1 OUT=$2
S="--data /usr/share/datasets/fashion-mnist --model alexnet --width-div 8 --epochs 40 --seeds 3"
# The methods: SGD, Clip-SGD and PS-Clip-SGD at the thresholds of the grid
# (grid/), PS-Clip-SGD at the γ that clips about 11 of 64 samples a batch,
# and the increasing threshold.
DIRS="sgd clip-sgd ps-clip-sgd ps-clip-11 inc-ps-clip-sgd"
methods() {
	case $1 in
	sgd) echo "--methods sgd" ;;
	clip-sgd) echo "--methods clip-sgd=4" ;;
	ps-clip-sgd) echo "--methods ps-clip-sgd=100" ;;
	ps-clip-11) echo "--methods ps-clip-sgd=25" ;;
	inc-ps-clip-sgd) echo "--methods inc-ps-clip-sgd --inc-alpha 10 --inc-beta 2" ;;
	esac
}
# RUN_ONLY, if set, lists the directories to start (default: all of DIRS).
for A in autoaugment cropflip; do
	mkdir -p "$OUT/$A"
	if [ "${3:-}" = merge ]; then
		P=
		for D in $DIRS; do P="$P${P:+,}$OUT/$A/$D"; done
		R= # a fresh gathering, or --resume one that has begun
		if [ -d "$OUT/$A/all" ]; then R=--resume; fi
		GOMAXPROCS=1 nice -n 19 "$B" experiment images $S --augment $A \
			--methods sgd,clip-sgd=4,ps-clip-sgd=100,ps-clip-sgd=25,inc-ps-clip-sgd --inc-alpha 10 --inc-beta 2 \
			--gather "$P" $R --out "$OUT/$A/all" >"$OUT/$A/all.out" 2>>"$OUT/$A/all.log"
		continue
	fi
	for D in ${RUN_ONLY:-$DIRS}; do
		R= # a fresh experiment, or --resume one that has begun
		if [ -d "$OUT/$A/$D" ]; then R=--resume; fi
		echo "$(date -u +%FT%TZ) $B experiment images $S --augment $A $(methods $D) $R --out $OUT/$A/$D" >>"$OUT/commands.log"
		# shellcheck disable=SC2046 # the methods' flags are words
		GOMAXPROCS=1 nohup nice -n 19 "$B" experiment images $S --augment $A $(methods $D) $R \
			--out "$OUT/$A/$D" >>"$OUT/$A/$D.out" 2>>"$OUT/$A/$D.log" &
	done
done
