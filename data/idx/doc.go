// Package idx reads IDX files, the format of MNIST and Fashion-MNIST, and
// loads a directory in their layout as grey data/cifar Datasets, so that
// the CNN trainer splits, normalises, augments and batches them as it does
// CIFAR.
//
// # Files
//
// An IDX file is a 4-byte magic number — two zero bytes, an element type
// (0x08: unsigned bytes, the only type these data sets use) and the number
// of dimensions — then each dimension as a big-endian uint32, then the
// elements in row-major order. ReadFile reads one such file, raw or
// gzip-compressed (told apart by gzip's magic 0x1f 0x8b, not by the name).
// Everything is checked before anything is allocated for the elements: the
// magic number; every dimension at least 1; a product of at most MaxBytes;
// and a size that matches the file's: a raw file must be exactly the
// header and the elements, and a gzip file must be large enough to
// decompress to that many bytes at deflate's greatest ratio (1032:1), so a
// short file cannot make it allocate more than about a thousand times its
// own size. The decompressed data must then end exactly where the header
// says, with a valid checksum. Errors are *Error values that name the file
// and the byte offset at fault (in the decompressed data, for gzip);
// truncation wraps ErrTruncated.
//
// # Directories
//
// Load reads a directory in the MNIST layout: train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte, each optionally with a .gz suffix (as Debian's
// dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist).
// Image files have three dimensions (count, rows, columns), label files
// one (count); a split's images and labels must agree in count. The number
// of classes is one more than the largest label of either split (10 for
// MNIST and Fashion-MNIST). Images up to 32×32 pixels are centred on a
// black 32×32 canvas — MNIST's 28×28 digits gain two pixels on every side,
// as LeNet-5 padded them — so that the networks built for CIFAR's 32×32
// images take them with one input channel.
package idx
