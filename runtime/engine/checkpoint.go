package engine

import (
	"context"
	"time"

	"vkchat/runtime/backend"
)

// A hybrid model's recurrent layers (backend.StateBackend) fold every
// position into a fixed-size state that cannot be cut back, so reusing a
// cached prefix means restoring a saved state at or before its end and
// reading the tokens after it again. The engine asks the backend for
// checkpoints where later requests are likely to branch:
//
//   - after each prompt less its last token: Ctrl+R regenerates from
//     exactly there (the last prompt token is always recomputed for its
//     logits), and a fork at the reply's first token too;
//   - every checkpointEvery generated tokens: a fork at any token of a
//     reply re-reads fewer than that many tokens (a batched prefill,
//     far cheaper than decoding them);
//   - at the end of each reply: the next turn's prompt starts with this
//     one's prompt and reply, usually all of it.
//
// The backend bounds how many it keeps (dropping the oldest), so a long
// reply cannot grow the memory they take; Memory.CheckpointBytes says how
// much that is.
const defaultCheckpointEvery = 128

// stateBackend is the backend as a StateBackend; nil for attention-only
// models, whose KV cache is rewound just by forwarding at an earlier
// position.
func (s *Session) stateBackend() backend.StateBackend {
	sb, ok := s.be.(backend.StateBackend)
	if !ok || s.model.RecurrentLayers() == 0 {
		return nil
	}
	return sb
}

// checkpoint saves the recurrent state, when there is one and it is known
// to be after exactly the cached tokens.
func (s *Session) checkpoint() {
	if sb := s.stateBackend(); sb != nil && s.stateAt >= 0 {
		s.mu.Lock()
		at := len(s.cached)
		s.mu.Unlock()
		if at == s.stateAt {
			sb.Checkpoint()
		}
	}
}

// rewindState brings the recurrent state to at most reuse positions and
// returns where it is: reuse itself when the live state is there already,
// else the latest checkpoint at or before it (0 at worst). The KV cache
// needs nothing: the next Forward overwrites it from that position.
func (s *Session) rewindState(reuse int) int {
	sb := s.stateBackend()
	if sb == nil || s.stateAt == reuse {
		return reuse
	}
	s.stateAt = sb.Rewind(reuse)
	return s.stateAt
}

// reread feeds prompt[from:reuse] again after a rewind to a checkpoint
// before the reused prefix, and says how long it took.
func (s *Session) reread(ctx context.Context, prompt []int32, from, reuse int) (time.Duration, error) {
	if from >= reuse {
		return 0, nil
	}
	start := time.Now()
	_, err := s.forwardChunked(ctx, prompt[from:reuse], from, nil)
	return time.Since(start), err
}
