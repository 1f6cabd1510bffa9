package main

import (
	"flag"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/experiments/images"
)

// featuresFlags binds --features and --features-cache (the directory
// where computed features are kept) of the image training command to c
// and cache.
func featuresFlags(fs *flag.FlagSet, c *images.Config, cache *string) {
	def := ""
	if dir, err := os.UserCacheDir(); err == nil {
		def = filepath.Join(dir, "psclip")
	}
	fs.StringVar(&c.Features, "features", c.Features, "train on fixed features of the images instead of their pixels: "+images.FeaturesScatter+" (the scattering transform, J = 2, L = 8: 81×7×7 per 28×28 grey image, as Tramèr & Boneh; for --model "+images.ModelScatterLinear+" or "+images.ModelScatterCNN+"), computed once and cached in --features-cache")
	fs.StringVar(cache, "features-cache", def, "`directory` of the --features cache, one file per data set and transform (empty: compute them every run)")
}

// computeFeatures computes (or reads from the cache) the features a run
// of c trains on, if any; bad images are a usage error.
func computeFeatures(c images.Config, d *images.Data, cache string) error {
	if c.Features != images.FeaturesScatter {
		return nil // Validate has refused any other value
	}
	if err := d.ScatterFeatures(cache, stderr); err != nil {
		return usagef("--features %s: %v", c.Features, err)
	}
	return nil
}
