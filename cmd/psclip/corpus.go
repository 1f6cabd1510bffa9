package main

import (
	"flag"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/experiments/gpt"
)

// dataFlags binds the flags that choose a GPT corpus.
func dataFlags(fs *flag.FlagSet, d *gpt.DataSpec) {
	fs.StringVar(&d.Text, "text", d.Text, "the text file, split 90/10 (default: the Go standard library source)")
	fs.StringVar(&d.Dir, "data", d.Dir, "the directory of nanoGPT's train.bin/val.bin (uint16 tokens; psclip data tokenize writes one), with its vocab.txt if there is one")
	fs.StringVar(&d.Level, "vocab", d.Level, "tokenisation of --text or the Go source: char or byte (default: char for --text, byte for the Go source)")
	fs.Int64Var(&d.MaxBytes, "corpus-bytes", d.MaxBytes, "use only the first N bytes of the Go source corpus (0: all)")
	fs.Float64Var(&d.TestFraction, "test-fraction", d.TestFraction, "hold the last `fraction` of the text (--text or the Go source) out as a test split, before the 90/10 split of the rest; runs report their final test loss, and nothing trains on or chooses by it (0: none)")
}

// loadCorpus reads the corpus the data flags name; its errors are usage
// errors. --corpus-bytes cuts only the Go source corpus, so it is refused
// beside --text or --data, where nothing would read it.
func loadCorpus(d gpt.DataSpec) (*text.Corpus, error) {
	if d.MaxBytes != 0 && (d.Text != "" || d.Dir != "") {
		return nil, usagef("--corpus-bytes applies to the Go source corpus, not to --text or --data")
	}
	corpus, err := gpt.LoadCorpus(d)
	if err != nil {
		return nil, usage(err)
	}
	return corpus, nil
}

// corpusFor loads the corpus d names with the vocabulary size c asks for,
// and checks that c can train on it: what train gpt and the GPT
// experiments do before anything is written.
func corpusFor(d gpt.DataSpec, c *gpt.Config) (*text.Corpus, error) {
	d.VocabSize = c.VocabSize
	corpus, err := loadCorpus(d)
	if err != nil {
		return nil, err
	}
	return corpus, c.CheckCorpus(corpus)
}
