// Package images is the paper's AlexNet/CIFAR-100 experiment as library
// code: training AlexNet-CIFAR with SGD, Clip-SGD or PS-Clip-SGD (constant
// or increasing threshold, or one of the estimator package's adaptive
// thresholds: α = σ̂, β = p̂ estimated online, the quantile-adaptive γ, or
// automatic clipping), all with momentum and weight decay; exact resume
// from checkpoints; and the comparison of the methods over seeds, with the
// paper's tables and figures. The commands "psclip train
// cifar" and "psclip experiment cifar" are thin wrappers over it.
//
// The same trainer takes any image data set data/images loads (CIFAR
// binaries, or IDX files such as Fashion-MNIST's: LoadData), SmallCNN in
// place of AlexNet (Config.Model), a random subset of the training split
// (Config.TrainSubset) and deliberate label noise on the training split
// (Config.LabelNoise, data/labelnoise), whose noisy images a run lists in
// NoisyFile and whose detection by per-sample clipping it logs every epoch
// (EpochRecord.Detection): "psclip train images" and "psclip experiment
// images".
//
// A run is built on the public packages only: data/cifar for the data
// (seeded 45,000/5,000 split, per-channel normalisation, AutoAugment or
// crop/flip, a resumable iterator), models.NewAlexNet, train.Trainer with
// an estimator from estimator.Spec and nn.CrossEntropy, optim.SGD,
// checkpoint for atomic, checksummed checkpoints, and internal/loop for
// progress, Ctrl-C and the bad-step limit:
//
//	data, _ := images.LoadData("cifar-100-binary")
//	cfg := images.Default() // PS-Clip-SGD γ=45, the paper's recipe
//	r, err := images.New(cfg, data, images.RunOptions{Out: "out"})
//	...
//	summary, err := r.Train(ctx)
//
// A run logs one EpochRecord per epoch to log.jsonl (training and
// validation accuracy and loss, wall time, throughput, the average
// per-sample gradient norm, clipped samples per batch, the fraction of
// clipped steps, skipped steps and dropped samples, an adaptive
// threshold's state: p̂, σ̂ or γ, and with AutoAugment and a per-sample
// estimator the clipped samples by the AutoAugment operations and
// sub-policies they received), with RunOptions.LogNorms also every
// step's per-sample norms (the input of the tail command), checkpoints
// after every epoch and on Ctrl-C, and writes result.json with the test
// accuracy at the end. A checkpoint holds the weights, the momentum
// buffers, the dropout stream, the iterator's position (which is its whole
// state), the epoch's running statistics and an adaptive estimator's state
// (its MarshalBinary), so a resumed run is bit-identical to an
// uninterrupted one.
//
// A sample whose loss or gradient is not finite never reaches the weights:
// PS-Clip-SGD drops it from the average (counted as a dropped sample);
// SGD and Clip-SGD, whose plain backward pass cannot separate samples,
// skip the step (counted as a skipped step). Config.MaxBadSteps
// consecutive steps without an update stop the run with an error and a
// checkpoint.
//
// An experiment (RunExperiment) trains every method at every seed from the
// same weights and batches, so its comparisons are paired: each table row
// holds the method's per-seed values and, against SGD, the paired
// statistics (internal/stats.Pair) of the final test accuracy and of the
// test accuracy at the epoch of best validation accuracy (Row.Paired).
// Report recomputes the rows and tables of a finished experiment from its
// results.json without training. Config.EvalEvery thins the per-epoch
// evaluations of long runs on small training subsets.
//
// See README.md in this directory for the commands, the choice of
// thresholds at reduced scale, and measured results.
package images
