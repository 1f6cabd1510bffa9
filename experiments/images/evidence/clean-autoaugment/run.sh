#!/bin/sh
# The clean-image study (README.md): AlexNet on clean Fashion-MNIST with the
# paper's recipe, with AutoAugment and with crop and flip only. Each
# augmentation and method is a part, an experiment directory of its own,
# OUT/ARM/METHOD, training seeds 1, 2 and 3 in turn.
#
#   run.sh PSCLIP OUT          start or resume (PSCLIP: the binary; OUT: outside git):
#                              LANES background lanes (default: one a CPU),
#                              each training its share of the parts one
#                              after another at GOMAXPROCS=1
#   run.sh PSCLIP OUT pack     pack the finished runs into finished-runs/,
#                              one tarball a part (results, logs, records;
#                              no checkpoints), to be committed
#   run.sh PSCLIP OUT merge [PART…]
#                              when the parts' runs have finished: OUT/ARM/all,
#                              the experiment over all methods (results.json,
#                              tables, figures), gathering the parts' runs
#                              (--gather: read back, not trained again), its
#                              files copied into ARM/ here; with PARTS (e.g.
#                              sgd ps-clip-11), of those parts alone, in
#                              OUT/ARM/sgd+ps-clip-11
#
# A start first unpacks finished-runs/ into OUT (never over a file OUT
# holds), so that a study begun on one machine resumes on another: the
# packed runs are read back, not trained again. Running the script again
# resumes every unfinished run from its checkpoint; a part still running is
# refused by its lock, which its log says, and its lane goes on to the next.
set -eu
B=$1 OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)
S="--data /usr/share/datasets/fashion-mnist --model alexnet --width-div 8 --epochs 40 --seeds 3"
# The methods: SGD, Clip-SGD and PS-Clip-SGD at the thresholds of the grid
# (grid/), PS-Clip-SGD at the γ that clips about 11 of 64 samples a batch,
# and the increasing threshold; in the order they are trained.
DIRS="sgd ps-clip-11 clip-sgd ps-clip-sgd inc-ps-clip-sgd"
ARMS="autoaugment cropflip"
methods() {
	case $1 in
	sgd) echo "--methods sgd" ;;
	clip-sgd) echo "--methods clip-sgd=4" ;;
	ps-clip-sgd) echo "--methods ps-clip-sgd=100" ;;
	ps-clip-11) echo "--methods ps-clip-sgd=25" ;;
	inc-ps-clip-sgd) echo "--methods inc-ps-clip-sgd --inc-alpha 10 --inc-beta 2" ;;
	esac
}
case ${3:-} in
merge)
	# the parts to gather: those named after "merge", or all of them
	shift 3
	PARTS=${*:-$DIRS}
	M= I=
	for D in sgd clip-sgd ps-clip-sgd ps-clip-11 inc-ps-clip-sgd; do # the study's order
		case " $PARTS " in *" $D "*) ;; *) continue ;; esac
		m=$(methods "$D" | cut -d' ' -f2)
		M="$M${M:+,}$m"
		if [ "$D" = inc-ps-clip-sgd ]; then I="--inc-alpha 10 --inc-beta 2"; fi
	done
	G=all # the experiment of all parts; of some, named for them
	if [ "$PARTS" != "$DIRS" ]; then G=$(echo "$PARTS" | tr ' ' +); fi
	for A in $ARMS; do
		mkdir -p "$OUT/$A"
		P=
		for D in $PARTS; do P="$P${P:+,}$OUT/$A/$D"; done
		R= # a fresh gathering, or --resume one that has begun
		if [ -d "$OUT/$A/$G" ]; then R=--resume; fi
		# shellcheck disable=SC2086 # the flags are words
		GOMAXPROCS=1 nice -n 19 "$B" experiment images $S --augment $A --methods "$M" $I \
			--gather "$P" $R --out "$OUT/$A/$G" >"$OUT/$A/$G.out" 2>>"$OUT/$A/$G.log"
		# the study's files (not its runs: finished-runs/ holds them) into ARM/ here
		mkdir -p "$HERE/$A"
		for f in "$OUT/$A/$G"/*.json "$OUT/$A/$G"/*.md "$OUT/$A/$G"/*.png "$OUT/$A/$G"/*.svg; do
			case ${f##*/} in psclip.json) continue ;; esac
			[ -f "$f" ] && cp "$f" "$HERE/$A/"
		done
	done
	exit 0
	;;
pack)
	mkdir -p "$HERE/finished-runs"
	cd "$OUT"
	for A in $ARMS; do
		for D in $DIRS; do
			[ -f "$A/$D/psclip.json" ] || continue
			files=$(find "$A/$D/runs" -name result.json 2>/dev/null | sort | sed 's|/result.json$||' |
				while read -r r; do echo "$r/psclip.json $r/result.json $r/log.jsonl"; done)
			[ -n "$files" ] || continue
			t="$HERE/finished-runs/$A-$D.tar.gz"
			# shellcheck disable=SC2086 # the files are words
			tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - "$A/$D/psclip.json" $files | gzip -n >"$t.tmp"
			mv "$t.tmp" "$t"
			echo "$t: $(echo "$files" | wc -l) runs"
		done
	done
	exit 0
	;;
esac
mkdir -p "$OUT"
for t in "$HERE"/finished-runs/*.tar.gz; do
	[ -f "$t" ] && tar -xzf "$t" -C "$OUT" --skip-old-files
done
# lane I of N: the parts I, I+N, I+2N, … of ARMS × DIRS, one after another.
lane() {
	trap '' HUP # the lanes outlive the terminal that started them, as nohup's would
	i=0
	for D in $DIRS; do
		for A in $ARMS; do
			i=$((i + 1))
			[ $(((i - 1) % $2)) -eq $(($1 - 1)) ] || continue
			mkdir -p "$OUT/$A"
			R= # a fresh experiment, or --resume one that has begun
			if [ -d "$OUT/$A/$D" ]; then R=--resume; fi
			echo "$(date -u +%FT%TZ) lane $1: $B experiment images $S --augment $A $(methods $D) $R --out $OUT/$A/$D" >>"$OUT/commands.log"
			# shellcheck disable=SC2046 # the methods' flags are words
			GOMAXPROCS=1 nice -n 19 "$B" experiment images $S --augment $A $(methods $D) $R \
				--out "$OUT/$A/$D" >>"$OUT/$A/$D.out" 2>>"$OUT/$A/$D.log" || true
		done
	done
}
N=${LANES:-$(nproc)}
for l in $(seq 1 "$N"); do
	lane "$l" "$N" </dev/null >/dev/null 2>&1 &
done
echo "$N lanes started; progress in $OUT/ARM/METHOD.log, commands in $OUT/commands.log"
