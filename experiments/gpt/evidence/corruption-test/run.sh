#!/bin/sh
# The corruption study on held-out text (README.md): the main study of
# ../corruption (psclip experiment gpt-corrupt's defaults: 6 settings × 6
# methods × 5 seeds, PS-Clip's γ from {1, 2, 3} on seeds 101 and 102, the
# K sweep at F = 0.2 clustered) with the last 10 % of the text held out as a
# test split (--test-fraction 0.1): γ is chosen on the validation loss, and
# every table reports the test loss. One background process at
# GOMAXPROCS=1 and nice 19, one experiment directory, OUT. Running the
# script again resumes: finished runs are read back, an interrupted one
# continues from its checkpoint; a second process on OUT is refused, and
# says so in OUT.log.
#
#   run.sh PSCLIP OUT     start or resume (PSCLIP: the binary, built by
#                         bench/evidence/build.sh; OUT: outside git)
#
# TEXT names the text (default /work/shared/data/tinyshakespeare.txt);
# EXTRA adds flags (a smoke test: EXTRA="--steps 3 --warmup 1
# --eval-interval 3 --eval-iters 8 --seeds 2").
set -eu
B=$1 OUT=$2
S="--text ${TEXT:-/work/shared/data/tinyshakespeare.txt} --test-fraction 0.1 ${EXTRA:-}"
R= # a fresh experiment, or --resume one that has begun
if [ -d "$OUT" ]; then R=--resume; fi
mkdir -p "$(dirname "$OUT")"
echo "$(date -u +%FT%TZ) $B experiment gpt-corrupt $S $R --out $OUT" >>"$OUT.commands"
# shellcheck disable=SC2086 # the flags are words
GOMAXPROCS=1 nohup nice -n 19 "$B" experiment gpt-corrupt $S $R --out "$OUT" >>"$OUT.out" 2>>"$OUT.log" &
echo "started: pid $!, progress in $OUT.log, tables in $OUT.out and $OUT/tables.md when done"
