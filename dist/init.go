//go:build !mpi

package dist

import (
	"os"
	"strconv"
)

// Init returns the communicator of the job this process belongs to. Built
// without the tag mpi, that is Local, and Init refuses to run as one of
// several ranks an MPI launcher started: each would train alone and write
// the same outputs.
func Init() (Comm, error) {
	if n := launchedRanks(); n > 1 {
		return nil, &NotBuiltError{Ranks: n}
	}
	return Local{}, nil
}

// launchedRanks is the number of ranks the launcher's environment announces
// (Open MPI's mpirun, or a PMI launcher such as MPICH's or Slurm's), 1 if
// none.
func launchedRanks() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 1 {
			return n
		}
	}
	return 1
}
