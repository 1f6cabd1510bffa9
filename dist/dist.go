// Package dist is psclip's communication layer for data-parallel training:
// a communicator (Comm) that sums gradient buffers over the ranks of a job,
// broadcasts, synchronises and ends the job, and the agreement on errors
// that keeps one rank's bad input from leaving the others waiting.
//
// Three communicators implement Comm:
//
//   - Local, one rank: every collective operation is the identity. It is
//     what Init returns in the default, pure-Go build.
//   - Group, n ranks that are goroutines of one process, connected in
//     memory: for tests, and to check that an n-rank run computes what one
//     process computes without starting n processes.
//   - MPI, behind the build tag mpi: Init connects to the job an MPI
//     launcher (mpirun, srun, the MPI Operator) started, through cgo over
//     Open MPI's C API. See README.md for the build and launch commands.
//
// # Deterministic sums
//
// AllReduce does not call MPI_Allreduce. MPI leaves the order in which
// floating-point values are added to the implementation, and the order
// Open MPI picks depends on the message size, the number of ranks and the
// tuning of the installation. AllReduce instead runs a ring all-reduce
// (reduce-scatter, then all-gather) in Go over point-to-point messages, so
// the order of additions is fixed by the number of ranks alone: chunk c of
// the vector is summed as ((x_c + x_{c+1}) + x_{c+2}) + … over the ranks
// c, c+1, …, c−1 (mod n), and then copied, so every rank ends with the same
// bits. Two runs of the same job give the same bits, and a Group of n ranks
// gives the bits of an MPI job of n ranks. Against one process that adds
// the same values in another order, the result differs by float rounding.
// The ring sends and receives 2(n−1)/n times the vector's size per rank,
// the least any all-reduce can (README.md has the cost model).
//
// # Threads
//
// The MPI communicator initialises MPI with MPI_THREAD_FUNNELED and makes
// every MPI call on that thread, from one goroutine locked to it; its
// methods hand their work to that goroutine and wait. Any goroutine may
// thus use a Comm, one at a time. Abort alone calls MPI directly, so that
// it works while another call is blocked.
//
// # Failures
//
// Collective operations return no errors: a transport failure in the middle
// of one (a rank that died, a lost connection) cannot be answered by the
// ranks still waiting in it, so the MPI communicator ends the whole job
// (MPI_ERRORS_ARE_FATAL), as mpirun also does when a rank exits. Errors a
// rank finds in its own input are a different matter: they must be agreed
// on before the next collective operation, with AgreeError, so that every
// rank stops with the same message. Every rank must call the collective
// operations in the same order with the same buffer lengths; anything else
// is a programming error, which ends the job where it is detected (a panic,
// or MPI's error) and may otherwise leave ranks waiting.
package dist

import (
	"os"
	"strconv"
)

// Comm is a communicator: the ranks 0..Size()−1 of one job, each running
// the same program. The collective operations (AllReduce, Broadcast,
// Barrier) must be called by every rank, in the same order, with buffers of
// the same lengths; each returns when this rank's part is done. A Comm is
// safe for use by one goroutine at a time; Abort may be called from any
// goroutine at any time.
type Comm interface {
	// Rank is this process's rank, in [0, Size()).
	Rank() int
	// Size is the number of ranks.
	Size() int
	// AllReduce replaces every element of b.F32 and b.F64 by its sum over
	// the ranks, the same bits on every rank (see the package
	// documentation for the order of the additions). b.Bytes must be
	// empty: bytes have no sum.
	AllReduce(b Bufs)
	// Broadcast copies root's b over every other rank's b.
	Broadcast(root int, b Bufs)
	// Barrier returns once every rank has called it.
	Barrier()
	// Abort ends every rank of the job at once with exit status code;
	// deferred functions do not run. It does not return.
	Abort(code int)
	// Close ends this rank's use of the communicator (MPI_Finalize). No
	// other method may be called after it.
	Close() error
}

// Bufs is the data of one collective operation: the concatenation of its
// float32 slices, its float64 slices and its byte slices, in that order.
// Gradients that live in one slice per parameter can be reduced in one
// operation, together with a step's float64 scalars, without first being
// copied into one buffer. MPI reads and writes the slices in place, so each
// must lie in memory that holds no Go pointers (its own make, not an array
// field of a struct with pointers): cgo refuses to hand such memory to C.
type Bufs struct {
	F32   [][]float32
	F64   [][]float64
	Bytes [][]byte
}

// Local is the communicator of a single process: rank 0 of 1.
type Local struct{}

func (Local) Rank() int           { return 0 }
func (Local) Size() int           { return 1 }
func (Local) AllReduce(b Bufs)    { checkSum(b) }
func (Local) Broadcast(int, Bufs) {}
func (Local) Barrier()            {}
func (Local) Abort(code int)      { os.Exit(code) }
func (Local) Close() error        { return nil }

// Share returns the part [lo, hi) of k items (a step's micro-batches) that
// rank computes out of size ranks: contiguous parts in rank order whose
// lengths differ by at most one, so that the items keep their global order
// across ranks. With k < size some ranks get none.
func Share(k, rank, size int) (lo, hi int) {
	if k < 0 || size < 1 || rank < 0 || rank >= size {
		panic("dist: Share needs k ≥ 0 and 0 ≤ rank < size")
	}
	return rank * k / size, (rank + 1) * k / size
}

// checkSum panics on a Bufs that AllReduce cannot sum.
func checkSum(b Bufs) {
	for _, s := range b.Bytes {
		if len(s) > 0 {
			panic("dist: AllReduce of bytes")
		}
	}
}

// NotBuiltError is Init's error in a build without the tag mpi started as
// one of several ranks of an MPI job.
type NotBuiltError struct{ Ranks int }

func (e *NotBuiltError) Error() string {
	return "started as one of " + strconv.Itoa(e.Ranks) + " MPI ranks, but built without MPI (build with -tags mpi)"
}
