// Package cifar loads CIFAR-10 and CIFAR-100, splits, normalises and
// augments them, delivers them as batches, and generates synthetic data
// sets in the CIFAR-100 format for machines without the real data.
//
// # Files
//
// Load reads a directory in either official binary layout, told apart by
// the files present: CIFAR-100's train.bin and test.bin (records of a
// coarse-label byte, a fine-label byte and 3072 pixel bytes) or CIFAR-10's
// data_batch_1.bin … data_batch_5.bin and test_batch.bin (a label byte and
// 3072 pixel bytes). Pixels are channel-major: the R, G and B planes of
// 32×32. Before allocating, every file's size is checked to be a positive
// multiple of the record size of at most MaxRecords records; every label is
// checked against the number of classes. Errors name the file and the
// record and byte offset at fault. Images stay bytes in memory (50,000
// images are 154 MB).
//
// # Preparing batches
//
// Split holds out a seeded random validation set: the paper's 45,000/5,000
// split is Split(train, ValidationSize(50000), seed). Stats computes the
// per-channel mean and standard deviation of the training split, which
// NewIterator's Normalizer applies as torchvision's ToTensor+Normalize
// would; psclip uses the statistics of the split it trains on rather than
// the usual CIFAR-100 constants (CIFAR100Norm), so that synthetic data is
// normalised correctly too.
//
// Training images are augmented with AutoAugment using the CIFAR-10 policy,
// as in the paper, and optionally the usual random crop (4-pixel zero
// padding) and horizontal flip before it. The 14 operations follow what
// torchvision's AutoAugment does to the PIL images a torchvision CIFAR
// dataset yields, with Pillow's arithmetic: single-precision blends
// truncated and clamped to [0, 255], the RGB→L conversion in 16-bit fixed
// point, the SMOOTH filter for sharpness, Pillow's autocontrast and
// equalize tables, and its 16.16 fixed-point nearest-neighbour affine
// sampler with fill 0. Magnitudes are torchvision's 10 bins, computed in
// float32 as torch.linspace does.
//
// An Iterator delivers [B,3,32,32] float32 batches ([B,1,32,32] for grey
// images) with int32 labels, the last batch of an epoch holding the
// remainder, and says which images a batch holds (Indices). Its randomness
// is keyed by (seed, epoch, image), so the batches are the same whatever
// the number of workers assembling them, and its Position (epoch, index)
// is its whole state: Seek to a saved Position resumes bit for bit.
//
// # Grey images
//
// A Dataset with Grey set holds one plane per image instead of three; the
// other data sets psclip reads are loaded this way (data/idx turns
// MNIST-style files into grey Datasets), so that splitting, statistics,
// augmentation and batches are the same code for all. Stats repeats the
// plane's statistics in all three channels. The augmentations act on the
// one plane; Color, a blend with the image's own grey level, leaves a grey
// image unchanged.
//
// # Synthetic data
//
// Synthesize makes a data set whose classes are mixtures of smooth random
// prototypes, with random shifts, contrast, brightness and noise, plus a
// chosen fraction of outlier training images, mislabelled or replaced by
// noise — the rare large per-sample gradients that per-sample clipping
// tames. WriteDir stores it in the CIFAR-100 layout, atomically.
//
// # Speed
//
// go test -bench . -count 3 ./data/cifar/ on the 2-core development machine
// (GOMAXPROCS=2) while it ran a dozen other jobs (load average 12), so the
// figures are pessimistic and varied by up to 3× between runs; the best of
// three:
//
//	BenchmarkAutoAugment       one image, CIFAR-10 policy      20.8 µs   48,000 img/s
//	BenchmarkCropFlip          one image, pad 4 + flip          8.5 µs  118,000 img/s
//	BenchmarkBatch/plain       batch of 128, normalise only    0.96 ms  133,000 img/s
//	BenchmarkBatch/autoaugment batch of 128, AutoAugment       4.75 ms   27,000 img/s
//	BenchmarkSynthesize        1,100 synthetic images           296 ms    3,700 img/s
//
// Data preparation is thus far cheaper than a training step of the
// paper's AlexNet on a CPU; sharpness and colour (per-pixel blends) are
// the most expensive operations.
package cifar
