#!/usr/bin/env bash
# build.sh OUT [go build flags]: builds cmd/psclip into OUT with the commit
# it is built from recorded in its provenance, even where GOFLAGS turns
# Go's own VCS stamping off: git's HEAD, "+dirty" when tracked files differ
# from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$1
shift
rev=$(git rev-parse HEAD)
git diff --quiet HEAD -- || rev+="+dirty"
go build "$@" -ldflags "-X github.com/psclip/psclip/provenance.buildCommit=$rev" -o "$out" ./cmd/psclip
