//go:build mpi

package dist

/*
#cgo pkg-config: ompi-c
#include <mpi.h>

static int initFunneled(int *provided) {
	int done;
	MPI_Initialized(&done);
	if (done) {
		return -1;
	}
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
}

static int worldRank(void) { int r; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
static int worldSize(void) { int n; MPI_Comm_size(MPI_COMM_WORLD, &n); return n; }

// sendRecv sends ns bytes to rank to and receives nr bytes from rank from.
// An empty message is not sent: both of its ends know its length. It
// returns the length of the message received, which differs from nr only
// when the ranks disagree (a longer one is an MPI error).
static int sendRecv(void *send, int ns, int to, void *recv, int nr, int from) {
	MPI_Request req[2];
	MPI_Status st[2];
	int k = 0, got = 0;
	if (nr > 0) {
		MPI_Irecv(recv, nr, MPI_BYTE, from, 0, MPI_COMM_WORLD, &req[k++]);
	}
	if (ns > 0) {
		MPI_Isend(send, ns, MPI_BYTE, to, 0, MPI_COMM_WORLD, &req[k++]);
	}
	MPI_Waitall(k, req, st);
	if (nr > 0) {
		MPI_Get_count(&st[0], MPI_BYTE, &got);
	}
	return got;
}

static void bcast(void *b, int n, int root) { MPI_Bcast(b, n, MPI_BYTE, root, MPI_COMM_WORLD); }
static void barrier(void) { MPI_Barrier(MPI_COMM_WORLD); }
static void abortWorld(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static int finalize(void) { return MPI_Finalize(); }
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Init initialises MPI and returns the communicator of all the job's ranks
// (MPI_COMM_WORLD); run by itself, without a launcher, the process is a job
// of one rank. Init may be called once per process.
//
// Threads: MPI is initialised with MPI_THREAD_FUNNELED, and every MPI call
// is made on the OS thread that initialised it, by one goroutine locked to
// that thread; the communicator's methods hand their work to that goroutine
// and wait for it. Go code may thus call the communicator from any
// goroutine (one at a time, as for every Comm), and MPI never sees two
// threads. The exception is Abort, which calls MPI_Abort on the caller's
// thread so that it works while another call is blocked; Open MPI ends the
// job through its runtime from any thread.
//
// Errors of MPI calls are fatal (MPI's default error handler): a rank that
// died or a lost connection ends the whole job.
func Init() (Comm, error) {
	initMu.Lock()
	defer initMu.Unlock()
	if mpiUsed {
		return nil, errors.New("dist: MPI can be initialised only once per process")
	}
	mpiUsed = true
	t := &mpiTransport{calls: make(chan func())}
	errc := make(chan error)
	go t.serve(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return &comm{t: t}, nil
}

var (
	initMu  sync.Mutex
	mpiUsed bool
)

// maxMessage is the longest message one MPI call carries: counts are C
// ints. Tests lower it to exercise the split. (The ring's messages are
// shorter: segmentBytes.)
var maxMessage = 1 << 30

// mpiTransport runs MPI calls on the thread that initialised MPI.
type mpiTransport struct {
	r, n  int
	calls chan func()
}

// serve initialises MPI on its own locked OS thread, reports the outcome
// on errc, and then runs the calls it is sent until close finalises MPI.
// It never unlocks the thread, so the thread ends with it.
func (t *mpiTransport) serve(errc chan<- error) {
	runtime.LockOSThread()
	var provided C.int
	switch rc := C.initFunneled(&provided); {
	case rc == -1:
		errc <- errors.New("dist: MPI was initialised outside package dist")
		return
	case rc != C.MPI_SUCCESS:
		errc <- fmt.Errorf("dist: MPI_Init_thread failed with error %d", int(rc))
		return
	case provided < C.MPI_THREAD_FUNNELED:
		C.finalize()
		errc <- errors.New("dist: this MPI does not support MPI_THREAD_FUNNELED")
		return
	}
	t.r, t.n = int(C.worldRank()), int(C.worldSize())
	errc <- nil
	for f := range t.calls {
		f()
	}
}

func (t *mpiTransport) rank() int { return t.r }
func (t *mpiTransport) size() int { return t.n }

func (t *mpiTransport) run(f func()) {
	done := make(chan struct{})
	t.calls <- func() { f(); close(done) }
	<-done
}

func (t *mpiTransport) sendRecv(to int, send []byte, from int, recv []byte) {
	if C.sendRecv(ptr(send), C.int(len(send)), C.int(to), ptr(recv), C.int(len(recv)), C.int(from)) != C.int(len(recv)) {
		panic("dist: ranks disagree on the length of a message")
	}
}

// bcast splits a message into calls of at most maxMessage bytes; every
// rank splits the same length the same way.
func (t *mpiTransport) bcast(root int, b []byte) {
	for len(b) > 0 {
		n := min(len(b), maxMessage)
		C.bcast(ptr(b), C.int(n), C.int(root))
		b = b[n:]
	}
}

func (t *mpiTransport) barrier()       { C.barrier() }
func (t *mpiTransport) abort(code int) { C.abortWorld(C.int(code)) }

func (t *mpiTransport) close() error {
	var rc C.int
	t.run(func() { rc = C.finalize() })
	close(t.calls)
	if rc != C.MPI_SUCCESS {
		return fmt.Errorf("dist: MPI_Finalize failed with error %d", int(rc))
	}
	return nil
}

// ptr is b's memory for C, nil when b is empty. The memory holds no Go
// pointers and C keeps no reference past the call.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}
