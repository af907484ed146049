package tokenizer

import "math"

// bigram is a candidate merge of two adjacent symbols. key orders the work
// queue: smaller first, with the left symbol's index in the low half so that
// ties go to the leftmost pair, as both of llama.cpp's comparators do.
type bigram struct {
	key         uint64
	left, right int32
	size        int32 // byte length of the pair, to spot stale entries
	id          int32 // token the pair forms (BPE), or -1
}

func bpeKey(rank int32, left int32) uint64 { return uint64(uint32(rank))<<32 | uint64(uint32(left)) }

// spmKey puts higher scores first: IEEE floats ordered as integers, inverted.
// llama.cpp's comparator treats a NaN score as equal to everything; here a
// NaN sorts last.
func spmKey(score float32, left int32) uint64 {
	b := math.Float32bits(score)
	if score != score {
		b = 0
	} else if b&0x80000000 != 0 {
		b = ^b
	} else {
		b |= 0x80000000
	}
	return uint64(^b)<<32 | uint64(uint32(left))
}

type bigramHeap []bigram

func (h *bigramHeap) push(b bigram) {
	*h = append(*h, b)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].key <= b.key {
			break
		}
		s[i] = s[p]
		i = p
	}
	s[i] = b
}

func (h *bigramHeap) pop() bigram {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	n := len(s)
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1].key < s[c].key {
			c++
		}
		if last.key <= s[c].key {
			break
		}
		s[i] = s[c]
		i = c
	}
	if n > 0 {
		s[i] = last
	}
	*h = s
	return top
}
