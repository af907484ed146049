package tokenizer

type bpeSymbol struct {
	start, n   int
	prev, next int
}

type bpeBigram struct {
	left, right int
	rank        int32
	size        int
}

// bpeHeap orders bigrams as llama.cpp's llm_bigram_bpe comparator: lowest
// merge rank first, and among equal ranks the leftmost.
type bpeHeap []bpeBigram

func (h bpeHeap) less(i, j int) bool {
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	return h[i].left < h[j].left
}

func (h *bpeHeap) push(b bpeBigram) {
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

func (h *bpeHeap) pop() bpeBigram {
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

// bpeScratch is reused across the words of one Encode call.
type bpeScratch struct {
	syms []bpeSymbol
	heap bpeHeap
}

// encodeBPE is llama.cpp's llm_tokenizer_bpe_session::tokenize on text that
// special-token partitioning left: pre-tokenize into byte-level words, merge
// each word by rank with a heap over a linked list of symbols (n log n, so a
// long word without spaces stays cheap), and look the symbols up.
func (t *Tokenizer) encodeBPE(text string, out []int32, sc *bpeScratch) []int32 {
	for _, word := range t.pre.words(text) {
		out = t.mergeWord(word, out, sc)
	}
	return out
}

func (t *Tokenizer) mergeWord(word string, out []int32, sc *bpeScratch) []int32 {
	if word == "" {
		return out
	}
	if t.ignoreMerges {
		if id := t.lookup(word); id >= 0 {
			return append(out, id)
		}
	}
	syms := sc.syms[:0]
	for off := 0; off < len(word); {
		n := min(utf8Len(word[off]), len(word)-off)
		syms = append(syms, bpeSymbol{start: off, n: n, prev: len(syms) - 1, next: len(syms) + 1})
		off += n
	}
	syms[len(syms)-1].next = -1

	h := sc.heap[:0]
	add := func(l, r int) {
		if l < 0 || r < 0 {
			return
		}
		a, b := syms[l], syms[r]
		rank, ok := t.ranks[mergeKey{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}]
		if !ok {
			return
		}
		h.push(bpeBigram{left: l, right: r, rank: rank, size: a.n + b.n})
	}
	for i := 1; i < len(syms); i++ {
		add(i-1, i)
	}
	for len(h) > 0 {
		bg := h.pop()
		l, r := &syms[bg.left], &syms[bg.right]
		// Symbols only grow to the right, so unchanged lengths mean the
		// pair still spells bigram's text (llama.cpp compares the strings).
		if l.n == 0 || r.n == 0 || l.n+r.n != bg.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		add(l.prev, bg.left)
		add(bg.left, l.next)
	}

	for i := 0; i != -1; i = syms[i].next {
		s := word[syms[i].start : syms[i].start+syms[i].n]
		if id := t.lookup(s); id >= 0 {
			out = append(out, id)
			continue
		}
		// llama.cpp's fallback looks up each byte of the encoded symbol as a
		// one-byte token; byte-level vocabularies rarely have those, and
		// what is not found is dropped.
		for j := 0; j < len(s); j++ {
			if id := t.lookup(s[j : j+1]); id >= 0 {
				out = append(out, id)
			}
		}
	}
	sc.syms, sc.heap = syms, h
	return out
}
