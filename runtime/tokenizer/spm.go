package tokenizer

// spmSymbol is a run of bytes of the input; merging grows the left symbol
// and empties the right one, so a symbol's start never moves.
type spmSymbol struct {
	start, n   int
	prev, next int
}

type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// spmHeap orders bigrams as llama.cpp's llm_bigram_spm comparator: highest
// score first, and among equal scores the leftmost.
type spmHeap []spmBigram

func (h spmHeap) less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score > h[j].score
	}
	return h[i].left < h[j].left
}

func (h *spmHeap) push(b spmBigram) {
	*h = append(*h, b)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *spmHeap) pop() spmBigram {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
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

// encodeSPM is llama.cpp's llm_tokenizer_spm_session::tokenize on text whose
// spaces are already ▁: start from UTF-8 characters (by lead byte, as
// llama.cpp cuts them), repeatedly merge the adjacent pair that forms the
// highest-scoring token, then fall back to byte tokens for what is left.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	syms := make([]spmSymbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		syms = append(syms, spmSymbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	syms[len(syms)-1].next = -1

	h := make(spmHeap, 0, len(syms))
	tryAdd := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		size := syms[l].n + syms[r].n
		if size > t.maxLen {
			return
		}
		id := t.lookup(text[syms[l].start : syms[l].start+size])
		if id < 0 {
			return
		}
		h.push(spmBigram{left: l, right: r, score: t.tokens[id].score, size: size})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for len(h) > 0 {
		b := h.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}

	for i := 0; i != -1; i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id := t.lookup(s); id >= 0 {
			out = append(out, id)
			continue
		}
		// llama.cpp would first try to re-split via the merges that built
		// this symbol, but every merged symbol is a token, so only single
		// characters reach this point.
		for j := 0; j < len(s); j++ {
			if id := t.byteTok[s[j]]; id >= 0 {
				out = append(out, id)
			}
		}
	}
	return out
}
