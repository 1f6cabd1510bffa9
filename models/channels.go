package models

import "fmt"

// inChannels resolves a network's InChannels setting: 0 means 3 (RGB), so
// that configurations written before the setting existed keep their
// meaning; otherwise it must be positive.
func inChannels(model string, n int) (int, error) {
	switch {
	case n == 0:
		return 3, nil
	case n < 0:
		return 0, fmt.Errorf("models: %s input channels must be positive, got %d", model, n)
	}
	return n, nil
}
