//go:build !unix

package run

import "os"

// lock records this process in the file at path. Without flock there is
// no lock a killed process is sure to release, so on these systems two
// processes are not kept from one run directory.
func lock(path, kind string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := writePID(f, kind); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
