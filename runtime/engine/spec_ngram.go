package engine

import "context"

// ngramDrafter drafts by lookup in the conversation so far: it finds the
// latest earlier place where the last few tokens occurred and proposes
// the tokens that followed them there. It needs no model, costs a scan of
// the history, and pays off where a reply repeats what came before (code
// being edited, quotes, lists, loops).
type ngramDrafter struct{}

// The longest and shortest suffixes looked up: a longer match predicts
// better and is tried first; a single token matches too often to be worth
// a verification row.
const (
	ngramMax = 4
	ngramMin = 2
)

func newNgramDrafter() *ngramDrafter { return &ngramDrafter{} }

func (*ngramDrafter) Name() string { return string(SpecNgram) }

// Propose implements Drafter.
func (*ngramDrafter) Propose(_ context.Context, history []int32, n int) ([]Draft, error) {
	for g := min(ngramMax, len(history)-1); g >= ngramMin; g-- {
		if d := ngramLookup(history, g, n); len(d) > 0 {
			return d, nil
		}
	}
	return nil, nil
}

// ngramLookup proposes up to n tokens following the latest earlier
// occurrence of history's last g tokens.
func ngramLookup(history []int32, g, n int) []Draft {
	end := len(history)
	key := history[end-g:]
	for at := end - g - 1; at >= 0; at-- {
		if history[at] != key[0] {
			continue
		}
		match := true
		for j := 1; j < g; j++ {
			if history[at+j] != key[j] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		// The continuation is copied as LZ77 copies a match: past the
		// history's end it goes on from the drafts themselves, so a
		// loop whose latest occurrence ends just before the end (a
		// repeated token, a short cycle) is drafted n tokens ahead, not
		// one.
		from := at + g
		out := make([]Draft, n)
		for i := range out {
			if j := from + i; j < end {
				out[i].Token = history[j]
			} else {
				out[i].Token = out[j-end].Token
			}
		}
		return out
	}
	return nil
}

func (*ngramDrafter) Observe([]int32, int, Hidden) {}
func (*ngramDrafter) Settle(int)                   {}
func (*ngramDrafter) Close() error                 { return nil }
