package bpe

// bpe merges p's bytes into tokens: the adjacent pair of lowest rank
// first, the leftmost of equal ranks, until no pair merges; tiktoken's
// order. Where every merge's tokens are made by merges of lower rank (Read
// checks it), this is GPT-2's encoder.py, which joins every occurrence of
// the lowest pair, left to right, before it looks again. A heap of the
// candidate pairs and a linked list of the tokens make it O(n log n) in
// the piece's length n, so a long run of letters costs no more per byte
// than a word.
func (t *Tokenizer) bpe(p []byte) []int32 {
	n := len(p)
	id := make([]int32, n)
	next := make([]int, n) // the token after i, or n
	prev := make([]int, n) // the token before i, or -1
	for i, b := range p {
		id[i], next[i], prev[i] = t.byteID[b], i+1, i-1
	}
	var h pairHeap
	push := func(i int) { // the pair of token i and the next, if it merges
		if j := next[i]; j < n {
			if m, ok := t.merges[pair{id[i], id[j]}]; ok {
				h.push(candidate{rank: m.rank, pos: i, left: id[i], right: id[j]})
			}
		}
	}
	for i := range n - 1 {
		push(i)
	}
	for len(h) > 0 {
		c := h.pop()
		i := c.pos
		j := next[i]
		// A candidate is stale once either of its tokens has merged since
		// it was pushed: token i changed, or the one after it did.
		if id[i] != c.left || j == n || id[j] != c.right {
			continue
		}
		id[i] = t.merges[pair{c.left, c.right}].id
		id[j] = -1 // removed
		next[i] = next[j]
		if next[i] < n {
			prev[next[i]] = i
		}
		if prev[i] >= 0 {
			push(prev[i])
		}
		push(i)
	}
	out := make([]int32, 0, n)
	for i := 0; i < n; i = next[i] {
		out = append(out, id[i])
	}
	return out
}

// candidate is an adjacent pair that merges: tokens left and right, the
// left one at byte position pos of the piece.
type candidate struct {
	rank        int32
	pos         int
	left, right int32
}

func (c candidate) less(d candidate) bool {
	return c.rank < d.rank || c.rank == d.rank && c.pos < d.pos
}

// pairHeap is a binary min-heap of candidates by rank, then position.
type pairHeap []candidate

func (h *pairHeap) push(c candidate) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].less(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() candidate {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].less(s[m]) {
			m = l
		}
		if r < len(s) && s[r].less(s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
