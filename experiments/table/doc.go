// Package table trains an MLP on a table of numeric features read from
// CSV (data/table): classification with cross-entropy or, for two
// classes, binary cross-entropy; regression with the mean squared error
// or the Huber loss. It is the trainer of "psclip train table", built on
// the same pieces as the image and text trainers: an estimator from
// estimator.Spec (every one, DP-SGD included), batches drawn by the
// samplers of data/dataset (a shuffled epoch, or DP-SGD's Poisson sample
// keyed by the run's secret), models.NewMLP, optim.SGD and the run layer
// (package run) for the run directory, the log, checkpoints, exact resume
// and, for DP-SGD, the release filter.
//
// A run holds out a seeded share of the rows for validation
// (Config.ValFraction), standardises the features by the training rows'
// statistics (never the validation or test rows'; not under DP-SGD, where
// they would be a release the accountant does not count), and evaluates
// the validation rows and an optional test file after every epoch:
//
//	data, _ := table.LoadData("adult.csv", "", cfg) // cfg.Target: the column to predict
//	r, err := table.New(cfg, data, table.RunOptions{Out: "out"})
//	...
//	summary, err := r.Train(ctx)
package table
