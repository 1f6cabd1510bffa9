//go:build !mpi

package dist

import (
	"errors"
	"testing"
)

func TestInit(t *testing.T) {
	for _, tc := range []struct {
		env, value string
		ranks      int // 0: Init succeeds
	}{
		{"OMPI_COMM_WORLD_SIZE", "", 0},
		{"OMPI_COMM_WORLD_SIZE", "1", 0},
		{"OMPI_COMM_WORLD_SIZE", "4", 4},
		{"PMI_SIZE", "2", 2},
	} {
		t.Setenv("OMPI_COMM_WORLD_SIZE", "")
		t.Setenv("PMI_SIZE", "")
		t.Setenv(tc.env, tc.value)
		c, err := Init()
		var nb *NotBuiltError
		switch {
		case tc.ranks == 0 && (err != nil || c != Comm(Local{})):
			t.Errorf("%s=%q: Init = %v, %v; want Local", tc.env, tc.value, c, err)
		case tc.ranks > 0 && (!errors.As(err, &nb) || nb.Ranks != tc.ranks):
			t.Errorf("%s=%q: Init error %v, want a NotBuiltError for %d ranks", tc.env, tc.value, err, tc.ranks)
		}
	}
}
