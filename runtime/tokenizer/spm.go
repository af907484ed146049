package tokenizer

// symbol is a run of bytes of the input; merging grows the left symbol and
// empties the right one, so a symbol's start never moves.
type symbol struct {
	start, n   int32
	prev, next int32
	id         int32 // BPE: the token this symbol spells, or -1
}

// encodeSPM is llama.cpp's llm_tokenizer_spm_session::tokenize on text whose
// spaces are already ▁: start from UTF-8 characters (by lead byte, as
// llama.cpp cuts them), repeatedly merge the adjacent pair that forms the
// highest-scoring token, then fall back to byte tokens for what is left.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	syms := make([]symbol, 0, len(text))
	for off := 0; off < len(text); {
		n := min(utf8Len(text[off]), len(text)-off)
		i := int32(len(syms))
		syms = append(syms, symbol{start: int32(off), n: int32(n), prev: i - 1, next: i + 1})
		off += n
	}
	syms[len(syms)-1].next = -1

	h := make(bigramHeap, 0, len(syms))
	tryAdd := func(l, r int32) {
		if l < 0 || r < 0 {
			return
		}
		size := syms[l].n + syms[r].n
		if int(size) > t.maxLen {
			return
		}
		start := syms[l].start
		id := t.lookup(text[start : start+size])
		if id < 0 {
			return
		}
		h.push(bigram{key: spmKey(t.tokens[id].score, l), left: l, right: r, size: size})
	}
	for i := int32(1); i < int32(len(syms)); i++ {
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

	for i := int32(0); i != -1; i = syms[i].next {
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
