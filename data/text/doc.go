// Package text provides the token corpora of the GPT experiments: character-
// and byte-level tokenisation of any text, nanoGPT's .bin token files,
// nanoGPT's random-window batch sampling, and Poisson sampling of disjoint
// records for DP-SGD.
//
// A corpus is a uint16 token stream split 90/10 into training and
// validation parts (Split), after Corpus.HoldOut has held its last
// fraction out as a test part if asked, made in one of three ways:
//
//   - LoadText tokenises a text file, at Char level with the file's own
//     sorted characters as vocabulary (tinyshakespeare: 65 tokens, 1,003,854
//     train and 111,540 val, as nanoGPT's shakespeare_char) or at Byte level
//     with a fixed vocabulary of 256;
//   - FromText(GoSource("", maxBytes), level) tokenises the default corpus,
//     the Go standard library's source, present wherever Go is installed
//     (Go 1.26: 87,697,565 bytes in 6495 files; 1912 distinct characters;
//     read and tokenised in 0.8 s on a quiet 2-core machine, 3–5 s on a
//     loaded one);
//   - LoadBin reads a directory with nanoGPT's train.bin and val.bin (e.g. a
//     prepared OpenWebText), whose tokens are checked against the model's
//     vocabulary size, or against the Vocab of its VocabFile.
//
// Tokenize cuts a text as nanoGPT's prepare.py scripts do (SplitText) and
// encodes it with a Vocab or with GPT-2's byte-level BPE (package
// data/bpe); WriteBin writes the result as a token directory.
//
// A Sampler draws [B, T] int32 input and target batches from one split with
// a seeded PCG whose state can be saved and restored. Records, for DP-SGD,
// cuts a split into disjoint windows of T+1 tokens and draws Poisson
// samples of them, so that a token belongs to at most one sample of a
// batch and a privacy accountant's unit is one window. Vocab's text form
// (MarshalText) is what a checkpoint stores to decode sampled tokens later.
//
// A text or token file is checked before it is read: it must be a regular
// file no larger than 32 GiB, and a token file must have an even, non-zero
// size.
//
// Batch sampling (BenchmarkSamplerNext, 3 runs on a shared 2-core machine,
// Go 1.26) costs about 2.3 ns per window token, nothing next to a training
// step:
//
//	B×T = 12×64 (nanoGPT shakespeare_char)   1.6–1.9 µs/batch
//	B×T = 8×1024 (GPT-2 124M micro-batch)    17–19 µs/batch
package text
