package main

import (
	"flag"
	"fmt"

	"github.com/psclip/psclip/data/bpe"
	"github.com/psclip/psclip/data/text"
)

func init() {
	register(&command{
		name:  "data tokenize",
		short: "tokenise a text file into nanoGPT's train.bin and val.bin (GPT-2 BPE or characters) for train gpt --data",
		run:   runDataTokenize,
	})
}

func runDataTokenize(fs *flag.FlagSet, args []string) error {
	in := fs.String("text", "", "the text `file` to tokenise")
	tokenizer := fs.String("tokenizer", "gpt2", "gpt2 (GPT-2's byte-level BPE, 50257 tokens), char (the text's own characters, written to vocab.txt) or byte")
	vocabDir := fs.String("vocab-dir", "", "--tokenizer gpt2: the `directory` of encoder.json and vocab.bpe, or vocab.json and merges.txt (default: where data/bpe/fetch.sh puts them, $PSCLIP_GPT2_DIR or ~/.cache/psclip/gpt2)")
	out := fs.String("out", "", "output `directory`, new or empty (created if needed): train.bin, val.bin (uint16 little-endian) and, for char and byte, vocab.txt, for gpt2 "+text.TokenizerFile+" (which tokenizer, for psclip sample)")
	valFraction := fs.Float64("val-fraction", 0.1, "share of the text's characters, from its end, for val.bin (nanoGPT's prepare.py: 0.1)")
	force := fs.Bool("force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *in == "":
		return usagef("--text is required")
	case *out == "":
		return usagef("--out is required")
	case !(*valFraction > 0 && *valFraction < 1):
		return usagef("--val-fraction %v: want a share strictly between 0 and 1", *valFraction)
	case *tokenizer != "gpt2" && flagSet(fs, "vocab-dir"):
		return usagef("--vocab-dir applies only to --tokenizer gpt2")
	}
	b, err := text.ReadText(*in)
	if err != nil {
		return usage(err)
	}
	var (
		encode func([]byte) ([]uint16, error)
		vocab  *text.Vocab
		id     string // the tokenizer's, for a directory without vocab.txt
		size   int
	)
	switch *tokenizer {
	case "gpt2":
		dir := *vocabDir
		if dir == "" {
			if dir, err = bpe.DefaultDir(); err != nil {
				return err
			}
		}
		tok, err := bpe.Load(dir)
		if err != nil {
			return usage(err)
		}
		encode, size, id = tok.EncodeUint16, tok.Size(), tok.ID()
	case "char", "byte":
		level, _ := text.ParseLevel(*tokenizer)
		vocab = text.ByteVocab()
		if level == text.Char {
			if vocab, err = text.NewCharVocab(b); err != nil {
				return usage(fmt.Errorf("%s: %w", *in, err))
			}
		}
		encode, size = vocab.Encode, vocab.Size()
	default:
		return usagef("--tokenizer %q: want gpt2, char or byte", *tokenizer)
	}
	c, err := text.Tokenize(b, *valFraction, encode)
	if err != nil {
		return usage(fmt.Errorf("%s: %w", *in, err))
	}
	c.Vocab, c.Tokenizer = vocab, id
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	if err := text.WriteBin(*out, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: train.bin %d tokens, val.bin %d tokens (%s, vocabulary of %d)\n", *out, len(c.Train), len(c.Val), *tokenizer, size)
	return nil
}
