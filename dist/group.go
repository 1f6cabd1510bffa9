package dist

import (
	"os"
	"sync"
)

// Group returns n communicators connected in memory, ranks 0..n−1 of one
// job inside this process, each to be used by its own goroutine. Their
// AllReduce runs the same ring as an MPI job of n ranks, so it gives the
// same bits. Abort ends the process. Group panics if n < 1.
func Group(n int) []Comm {
	if n < 1 {
		panic("dist: Group needs at least one rank")
	}
	net := &memNet{links: make([][]chan []byte, n)}
	net.cond.L = &net.mu
	for i := range net.links {
		net.links[i] = make([]chan []byte, n)
		for j := range net.links[i] {
			// One message in flight per link: a ring step or a
			// broadcast sends at most one before it receives.
			net.links[i][j] = make(chan []byte, 1)
		}
	}
	cs := make([]Comm, n)
	for r := range cs {
		cs[r] = &comm{t: &memRank{net: net, r: r}}
	}
	return cs
}

// memNet links the ranks of a Group: links[from][to] carries copies of the
// messages from rank from to rank to.
type memNet struct {
	links [][]chan []byte

	mu      sync.Mutex
	cond    sync.Cond
	waiting int // ranks in the current barrier
	round   int // barriers completed
}

type memRank struct {
	net *memNet
	r   int
}

func (m *memRank) rank() int    { return m.r }
func (m *memRank) size() int    { return len(m.net.links) }
func (m *memRank) run(f func()) { f() }

func (m *memRank) sendRecv(to int, send []byte, from int, recv []byte) {
	if len(send) > 0 {
		m.net.links[m.r][to] <- append([]byte(nil), send...)
	}
	if len(recv) > 0 {
		m.receive(from, recv)
	}
}

func (m *memRank) bcast(root int, b []byte) {
	switch {
	case len(b) == 0:
		return
	case m.r != root:
		m.receive(root, b)
		return
	}
	for to := range m.net.links {
		if to != root {
			m.net.links[root][to] <- append([]byte(nil), b...)
		}
	}
}

// receive copies the next message from rank from into b, whose length the
// message must have.
func (m *memRank) receive(from int, b []byte) {
	msg := <-m.net.links[from][m.r]
	if len(msg) != len(b) {
		panic("dist: ranks disagree on the length of a message")
	}
	copy(b, msg)
}

func (m *memRank) barrier() {
	n := m.net
	n.mu.Lock()
	defer n.mu.Unlock()
	round := n.round
	n.waiting++
	if n.waiting == len(n.links) {
		n.waiting = 0
		n.round++
		n.cond.Broadcast()
		return
	}
	for n.round == round {
		n.cond.Wait()
	}
}

func (m *memRank) abort(code int) { os.Exit(code) }
func (m *memRank) close() error   { return nil }
