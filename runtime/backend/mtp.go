package backend

import (
	"context"
	"errors"
)

// ErrNoMTP is returned where a model has no MTP head to draft with.
var ErrNoMTP = errors.New("no MTP (NextN) head")

// MTPBackend is implemented by backends that can run a model's
// multi-token-prediction head (Qwen3.5/3.6's NextN block): a small
// decoder layer that drafts the token after next from a token and the
// trunk's hidden state, with a KV cache of its own.
type MTPBackend interface {
	Backend
	// HasMTP reports whether the loaded model has an MTP head.
	HasMTP() bool
	// ForwardHidden is Forward with the logits of every token, and also
	// every token's hidden state, len(tokens)×embd values: the last
	// trunk layer's output after the output norm, which is what
	// llama.cpp's MTP head is given under the name h_pre_norm (its
	// reference logits are reproduced with it, not with the stream
	// before the norm).
	ForwardHidden(ctx context.Context, tokens []int32, pos int) (logits, hidden []float32, err error)
	// MTP runs the head on rows at positions pos..: row i pairs token
	// tokens[i] (x_p) with hidden[i] (h_{p-1}: the trunk's hidden state
	// at the position before, zeros at position 0, or the head's own
	// output y for a chained draft). It returns every row's logits (the
	// draft of x_{p+1}) and its output y after its own final norm
	// (len(tokens)×embd), the hidden state of the next chained row. The head's
	// cache then holds rows 0..pos+len(tokens)-1: a call at pos rewinds
	// it there, as Forward does the trunk's. ErrNoMTP without a head.
	MTP(ctx context.Context, tokens []int32, hidden []float32, pos int) (logits, y []float32, err error)
	// KeepHidden turns on (or off) keeping the hidden state of the rows
	// Forward reads for HiddenBackend's LastHidden, which an MTP drafter
	// reads after each Forward; off, Forward keeps none. Calls pair up:
	// it is on while more true calls than false ones were made.
	KeepHidden(on bool)
}

// KeptHidden is what a backend keeps for KeepHidden and LastHidden: the
// hidden states of the rows Forward read since LastHidden was last
// called, as far as they run on one after another (positions
// pos..pos+rows-1), while on. The zero value is off.
type KeptHidden struct {
	keepers   int // KeepHidden(true) calls not yet paired with a false
	on        bool
	pos, rows int
	data      []float32
	read      bool // Take handed them over: the next Forward starts afresh
}

// Keep counts a KeepHidden call; it is on while more true calls than false
// ones were made and the model has a head to keep them for. Turning it on
// or off drops what was kept.
func (k *KeptHidden) Keep(on, head bool) {
	if on {
		k.keepers++
	} else if k.keepers > 0 {
		k.keepers--
	}
	if want := k.keepers > 0 && head; want != k.on {
		*k = KeptHidden{keepers: k.keepers, on: want}
	}
}

// On reports whether Forward keeps its rows' hidden states.
func (k *KeptHidden) On() bool { return k.on }

// Extend makes room for n more rows of embd values at pos, starting over
// after a Take or where pos does not follow the rows held (a rewind), and
// returns it; Done counts them once the Forward has filled them.
func (k *KeptHidden) Extend(pos, n, embd int) []float32 {
	if k.read || pos != k.pos+k.rows {
		k.pos, k.rows, k.read = pos, 0, false
	}
	need := (k.rows + n) * embd
	if cap(k.data) < need {
		k.data = append(k.data[:k.rows*embd], make([]float32, need-k.rows*embd)...)
	}
	k.data = k.data[:need]
	return k.data[k.rows*embd:]
}

// Done counts n rows Extend made room for as filled.
func (k *KeptHidden) Done(n int) { k.rows += n }

// Take is LastHidden: every row kept since the previous Take (0, nil when
// off or none), each embd values.
func (k *KeptHidden) Take(embd int) (int, []float32) {
	if !k.on || k.read || k.rows == 0 {
		return 0, nil
	}
	k.read = true
	return k.rows, k.data[:k.rows*embd]
}
