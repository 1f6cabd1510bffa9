// Package cifar is the paper's AlexNet/CIFAR-100 experiment as library
// code.
package cifar
