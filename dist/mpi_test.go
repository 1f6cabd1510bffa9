//go:build mpi

package dist

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The MPI tests come in two halves. Run by go test, TestMPIRun launches
// this test binary under mpirun, which runs the TestRank tests on every
// rank; they skip outside mpirun. By hand:
//
//	go test -c -tags mpi -o dist.test ./dist
//	mpirun -np 2 --oversubscribe ./dist.test -test.run '^TestRank'

// world is the job's communicator under mpirun, nil otherwise.
var world Comm

func TestMain(m *testing.M) {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		c, err := Init()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		world = c
		code := m.Run()
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// rankTest returns the job's communicator, skipping t outside mpirun.
func rankTest(t *testing.T) Comm {
	if world == nil {
		t.Skip("runs on the ranks of an MPI job; TestMPIRun starts one")
	}
	return world
}

// rankOut writes this rank's name.txt into the directory TestMPIRun reads
// back, DIST_TEST_OUT.
func rankOut(t *testing.T, c Comm, name, text string) {
	dir := os.Getenv("DIST_TEST_OUT")
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s.%d", name, c.Rank())), []byte(text), 0o644); err != nil {
		t.Error(err)
	}
}

func TestRankAllReduce(t *testing.T) {
	c := rankTest(t)
	for _, l := range layouts {
		for _, integers := range []bool{false, true} {
			checkAllReduce(t, c, l, integers)
		}
	}
	// Long enough for the transport's large-message protocol, in slices of
	// uneven lengths.
	big := layout{"large", []int{1 << 20, 1, 1 << 18, 12345}, []int{1000}}
	checkAllReduce(t, c, big, false)
}

// TestRankSplit repeats the collectives with the ring's segments and the
// broadcast's messages cut to 1000 bytes, so that every piece of the vector
// spans several segments, as broadcasts longer than a C int are split.
func TestRankSplit(t *testing.T) {
	c := rankTest(t)
	defer func(m, s int) { maxMessage, segmentBytes = m, s }(maxMessage, segmentBytes)
	maxMessage, segmentBytes = 1000, 1000
	for _, l := range layouts {
		checkAllReduce(t, c, l, false)
	}
	checkAllReduce(t, c, layout{"long", []int{100000, 7}, []int{3000}}, false)
	checkBroadcast(t, c)
	big := make([]byte, 12345)
	if c.Rank() == 0 {
		for i := range big {
			big[i] = byte(i)
		}
	}
	for i, b := range BroadcastBytes(c, 0, big) {
		if b != byte(i) {
			t.Fatalf("rank %d: byte %d of a long broadcast = %d", c.Rank(), i, b)
		}
	}
}

// TestRankBits records the digest of a sum, which TestMPIRun compares
// between ranks and runs, and checks that an in-memory Group of as many
// ranks computes the same bits.
func TestRankBits(t *testing.T) {
	c := rankTest(t)
	l := layout{"gradients", []int{100000, 3, 50001}, []int{9}}
	d := reduceDigest(c, l)
	var inMemory uint64
	onRanks(c.Size(), func(g Comm) {
		if x := reduceDigest(g, l); g.Rank() == c.Rank() {
			inMemory = x
		}
	})
	if d != inMemory {
		t.Errorf("rank %d: MPI sum digest %x, in-memory Group's %x", c.Rank(), d, inMemory)
	}
	rankOut(t, c, "digest", fmt.Sprintf("%x", d))
}

func TestRankBroadcast(t *testing.T) {
	checkBroadcast(t, rankTest(t))
}

func TestRankBarrier(t *testing.T) {
	checkBarrier(t, rankTest(t), nil)
}

func TestRankAgreeError(t *testing.T) {
	c := rankTest(t)
	var msgs []string
	for _, tc := range agreeCases {
		msgs = append(msgs, checkAgree(t, c, tc))
	}
	rankOut(t, c, "agree", strings.Join(msgs, "\n"))
}

func TestRankInitTwice(t *testing.T) {
	rankTest(t)
	if _, err := Init(); err == nil {
		t.Error("a second Init succeeded")
	}
}

// TestSingleton initialises MPI in a process no launcher started, which is
// then a job of one rank. TestMPIRun runs it in a process of its own.
func TestSingleton(t *testing.T) {
	if os.Getenv("DIST_TEST_SINGLETON") == "" {
		t.Skip("initialises MPI; TestMPIRun runs it in a process of its own")
	}
	c, err := Init()
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Errorf("a process started alone is rank %d of %d, want 0 of 1", c.Rank(), c.Size())
	}
	checkAllReduce(t, c, layouts[2], false)
	checkAgree(t, c, agreeCases[1])
	if err := c.Close(); err != nil {
		t.Error(err)
	}
}

// TestRankAbort ends the job from rank 1 with Abort, called from another
// goroutine while rank 1's MPI thread waits for a broadcast that never
// comes and rank 0 waits in a barrier. It runs only when TestMPIRun asks.
func TestRankAbort(t *testing.T) {
	c := rankTest(t)
	if os.Getenv("DIST_TEST_FAULT") != "abort" {
		t.Skip("ends the job; TestMPIRun runs it on its own")
	}
	if c.Rank() == 1 {
		go func() {
			time.Sleep(200 * time.Millisecond)
			c.Abort(7)
		}()
		c.Broadcast(0, Bufs{Bytes: [][]byte{make([]byte, 1)}})
	}
	c.Barrier()
	t.Error("the job outlived Abort")
}

// TestRankKilled kills rank 1 while rank 0 waits in a barrier.
func TestRankKilled(t *testing.T) {
	c := rankTest(t)
	if os.Getenv("DIST_TEST_FAULT") != "kill" {
		t.Skip("ends the job; TestMPIRun runs it on its own")
	}
	if c.Rank() == 1 {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	c.Barrier()
	t.Error("the job outlived a killed rank")
}

// TestRankMismatch sums vectors of different lengths on the two ranks, a
// programming error that must end the job rather than hang it.
func TestRankMismatch(t *testing.T) {
	c := rankTest(t)
	if os.Getenv("DIST_TEST_FAULT") != "mismatch" {
		t.Skip("ends the job; TestMPIRun runs it on its own")
	}
	c.AllReduce(Bufs{F32: [][]float32{make([]float32, 10+2*c.Rank())}})
	c.Barrier()
	t.Error("the job outlived a length mismatch")
}

// mpirun runs this test binary on np ranks with args, and returns its
// combined output and error; the job must end within a minute.
func mpirun(t *testing.T, np int, env []string, args ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found: install openmpi-bin")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmdArgs := append(mpirunFlags(np), os.Args[0])
	cmd := exec.CommandContext(ctx, path, append(cmdArgs, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("mpirun -np %d %s did not end within a minute:\n%s", np, strings.Join(args, " "), out)
	}
	return string(out), err
}

// mpirunFlags are the flags of an mpirun of np ranks on this machine, where
// there may be fewer cores than ranks and the tests may run as root.
func mpirunFlags(np int) []string {
	f := []string{"-np", fmt.Sprint(np), "--oversubscribe"}
	if os.Geteuid() == 0 {
		f = append(f, "--allow-run-as-root")
	}
	return f
}

func TestMPIRun(t *testing.T) {
	if world != nil {
		t.Skip("starts MPI jobs; runs outside mpirun")
	}
	for _, np := range []int{2, 3} {
		t.Run(fmt.Sprintf("np=%d", np), func(t *testing.T) {
			var digests []string
			for run := range 2 {
				dir := t.TempDir()
				out, err := mpirun(t, np, []string{"DIST_TEST_OUT=" + dir}, "-test.run", "^TestRank", "-test.v")
				if err != nil || strings.Count(out, "--- PASS: TestRankAllReduce") != np {
					t.Fatalf("run %d: %v:\n%s", run, err, out)
				}
				digests = append(digests, sameOnRanks(t, dir, "digest", np))
				sameOnRanks(t, dir, "agree", np)
			}
			if digests[0] != digests[1] {
				t.Errorf("two runs' sums differ: digests %s and %s", digests[0], digests[1])
			}
		})
	}
	t.Run("singleton", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestSingleton$", "-test.v")
		cmd.Env = append(os.Environ(), "DIST_TEST_SINGLETON=1")
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestSingleton") {
			t.Fatalf("%v:\n%s", err, out)
		}
	})
	// Open MPI exits with the code given to MPI_Abort, with 128 plus the
	// signal's number when a rank was killed by one, and with a failed
	// rank's exit status (a Go panic's is 2) or, when MPI itself detects
	// the error, the MPI error code (MPI_ERR_TRUNCATE is 15). (Its messages
	// are not checked: they are at times lost.)
	for _, tc := range []struct {
		fault, test string
		codes       []int
	}{
		{"abort", "TestRankAbort", []int{7}},
		{"kill", "TestRankKilled", []int{128 + int(syscall.SIGKILL)}},
		{"mismatch", "TestRankMismatch", []int{2, 15}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			start := time.Now()
			out, err := mpirun(t, 2, []string{"DIST_TEST_FAULT=" + tc.fault}, "-test.run", "^"+tc.test+"$")
			var exit *exec.ExitError
			if !errors.As(err, &exit) || !slices.Contains(tc.codes, exit.ExitCode()) || strings.Contains(out, "outlived") {
				t.Fatalf("mpirun ended with %v after %v, want exit status in %v:\n%s", err, time.Since(start), tc.codes, out)
			}
			t.Logf("job ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
		})
	}
}

// sameOnRanks returns the text every rank wrote to dir/name.r, failing t if
// the ranks wrote different texts.
func sameOnRanks(t *testing.T, dir, name string, np int) string {
	t.Helper()
	var first string
	for r := range np {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s.%d", name, r)))
		if err != nil {
			t.Fatal(err)
		}
		if r == 0 {
			first = string(b)
		} else if string(b) != first {
			t.Errorf("%s: rank %d wrote %q, rank 0 %q", name, r, b, first)
		}
	}
	return first
}

// BenchmarkAllReduce measures AllReduce of float32 vectors from 1 KB to
// 64 MB on the ranks of an MPI job. Every rank must run the same number of
// iterations, so it needs a fixed count:
//
//	go test -c -tags mpi -o dist.test ./dist
//	mpirun -np 2 --oversubscribe ./dist.test -test.run '^$' -test.bench AllReduce -test.benchtime 20x
//
// MB/s is the vector's size over the time (the algorithm's bandwidth);
// bus-GB/s multiplies it by 2(n−1)/n, the bytes each rank sends per byte
// reduced, so it compares with the link's bandwidth.
func BenchmarkAllReduce(b *testing.B) {
	if world == nil {
		b.Skip("runs on the ranks of an MPI job")
	}
	if bt := flag.Lookup("test.benchtime").Value.String(); !strings.HasSuffix(bt, "x") {
		b.Skip("needs -test.benchtime Nx: the ranks must agree on the iteration count")
	}
	n := world.Size()
	for size := 1 << 10; size <= 64<<20; size <<= 2 {
		b.Run(byteSize(size), func(b *testing.B) {
			x := make([]float32, size/4)
			buf := Bufs{F32: [][]float32{x}}
			world.AllReduce(buf) // grows the ring's buffers, untimed
			world.Barrier()
			b.SetBytes(int64(size))
			for b.Loop() {
				world.AllReduce(buf)
			}
			b.StopTimer()
			bus := float64(size) * float64(b.N) / b.Elapsed().Seconds() * 2 * float64(n-1) / float64(n)
			b.ReportMetric(bus/1e9, "bus-GB/s")
		})
	}
}

func byteSize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMB", n>>20)
	}
	return fmt.Sprintf("%dKB", n>>10)
}
