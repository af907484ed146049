package tokenizer

// bpeScratch is reused across the words of one Encode call.
type bpeScratch struct {
	syms []symbol
	heap bigramHeap
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

// rank finds the merge rank of two adjacent symbols. llama.cpp looks merges
// up by text; when both symbols are tokens the id pair names the same texts
// and avoids hashing strings.
func (t *Tokenizer) rank(word string, a, b *symbol) (rank, id int32, ok bool) {
	if a.id >= 0 && b.id >= 0 {
		m, ok := t.idRanks[uint64(uint32(a.id))<<32|uint64(uint32(b.id))]
		return m.rank, m.id, ok
	}
	r, ok := t.ranks[mergeKey{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}]
	if !ok {
		return 0, -1, false
	}
	return r, t.lookup(word[a.start : a.start+a.n+b.n]), true
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
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1, id: t.charID(word[off : off+n])})
		off += n
	}
	syms[len(syms)-1].next = -1

	h := sc.heap[:0]
	add := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		rank, id, ok := t.rank(word, &syms[l], &syms[r])
		if !ok {
			return
		}
		h.push(bigram{key: bpeKey(rank, l), left: l, right: r, size: syms[l].n + syms[r].n, id: id})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
		add(i-1, i)
	}
	for len(h) > 0 {
		bg := h.pop()
		l, r := &syms[bg.left], &syms[bg.right]
		// Symbols only grow to the right, so unchanged lengths mean the
		// pair still spells the bigram's text (llama.cpp compares strings).
		if l.n == 0 || r.n == 0 || l.n+r.n != bg.size {
			continue
		}
		l.n += r.n
		l.id = bg.id
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = bg.left
		}
		add(l.prev, bg.left)
		add(bg.left, l.next)
	}

	for i := int32(0); i != -1; i = syms[i].next {
		if id := syms[i].id; id >= 0 {
			out = append(out, id)
			continue
		}
		// llama.cpp's fallback looks up each byte of the encoded symbol as a
		// one-byte token; byte-level vocabularies rarely have those, and
		// what is not found is dropped.
		s := word[syms[i].start : syms[i].start+syms[i].n]
		for j := 0; j < len(s); j++ {
			if id := t.lookup(s[j : j+1]); id >= 0 {
				out = append(out, id)
			}
		}
	}
	sc.syms, sc.heap = syms, h
	return out
}

// charID is the token of one character of a byte-level word. Words consist
// of GPT-2 alphabet characters (U+0021..U+0143), which have a table.
func (t *Tokenizer) charID(c string) int32 {
	r, n := decodeOne(c, 0)
	if n == len(c) && r < rune(len(t.alphabet)) {
		return t.alphabet[r]
	}
	return t.lookup(c)
}

type mergeResult struct{ rank, id int32 }

// indexMerges builds the id-pair view of the merges and the alphabet table.
func (t *Tokenizer) indexMerges() {
	t.idRanks = make(map[uint64]mergeResult, len(t.ranks))
	for k, r := range t.ranks {
		a, b := t.lookup(k.a), t.lookup(k.b)
		if a < 0 || b < 0 {
			continue
		}
		t.idRanks[uint64(uint32(a))<<32|uint64(uint32(b))] = mergeResult{r, t.lookup(k.a + k.b)}
	}
	for r := range t.alphabet {
		t.alphabet[r] = t.lookup(string(rune(r)))
	}
}
