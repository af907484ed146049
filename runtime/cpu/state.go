package cpu

import (
	"fmt"
	"slices"

	"vkchat/runtime/backend"
)

// MaxCheckpoints is how many saved states the backend keeps (llama-server
// keeps up to 32 context checkpoints per slot; each of ours is a copy of
// every recurrent layer's state, so fewer).
const MaxCheckpoints = 8

// recurrentState is where the recurrent layers' state is (the position
// after the last token folded in) and the checkpoints taken of it.
type recurrentState struct {
	pos   int
	saved []checkpoint
}

// checkpoint is every recurrent layer's state after pos positions, the
// conv and matrix states of each layer concatenated in layer order.
type checkpoint struct {
	pos  int
	data []float32
}

var _ backend.StateBackend = (*Backend)(nil)

// at checks that a Forward at pos continues the state: pos 0 starts over
// from the empty state (always available, as Rewind(0) says); any other
// position must be where the state is.
func (h *hybrid) at(pos int) error {
	if pos == 0 {
		h.reset()
		return nil
	}
	if pos != h.state.pos {
		return fmt.Errorf("cpu backend: the recurrent state is at position %d, not %d: rewind to a checkpoint (StateBackend.Rewind) and feed the tokens after it", h.state.pos, pos)
	}
	return nil
}

// reset empties every layer's state.
func (h *hybrid) reset() {
	for l := range h.conv {
		clear(h.conv[l])
		clear(h.mat[l])
	}
	h.state.pos = 0
}

func (h *hybrid) stateFloats() int {
	n := 0
	for l := range h.conv {
		n += len(h.conv[l]) + len(h.mat[l])
	}
	return n
}

// Checkpoint implements backend.StateBackend; a no-op for a model without
// recurrent layers.
func (b *Backend) Checkpoint() {
	h := b.hybrid
	if h == nil {
		return
	}
	if n := len(h.state.saved); n > 0 && h.state.saved[n-1].pos == h.state.pos {
		return // already saved here
	}
	var data []float32
	if len(h.state.saved) >= MaxCheckpoints {
		data = h.state.saved[0].data[:0] // reuse the oldest's memory
		h.state.saved = slices.Delete(h.state.saved, 0, 1)
	} else {
		data = make([]float32, 0, h.stateFloats())
	}
	for l := range h.conv {
		data = append(data, h.conv[l]...)
		data = append(data, h.mat[l]...)
	}
	h.state.saved = append(h.state.saved, checkpoint{pos: h.state.pos, data: data})
}

// Rewind implements backend.StateBackend.
func (b *Backend) Rewind(pos int) int {
	h := b.hybrid
	if h == nil {
		return pos // a KV cache is cut back by Forward itself
	}
	saved := h.state.saved
	for len(saved) > 0 && saved[len(saved)-1].pos > pos {
		saved = saved[:len(saved)-1]
	}
	h.state.saved = saved
	if len(saved) == 0 {
		h.reset()
		return 0
	}
	cp := saved[len(saved)-1]
	data := cp.data
	for l := range h.conv {
		data = data[copy(h.conv[l], data):]
		data = data[copy(h.mat[l], data):]
	}
	h.state.pos = cp.pos
	return cp.pos
}

// DropCheckpoint implements backend.CheckpointDropper.
func (b *Backend) DropCheckpoint(pos int) {
	if h := b.hybrid; h != nil {
		h.state.saved = slices.DeleteFunc(h.state.saved, func(c checkpoint) bool { return c.pos == pos })
	}
}

// Checkpoints implements backend.StateBackend.
func (b *Backend) Checkpoints() []int {
	if b.hybrid == nil {
		return nil
	}
	out := make([]int, len(b.hybrid.state.saved))
	for i, c := range b.hybrid.state.saved {
		out[i] = c.pos
	}
	return out
}

// checkpointBytes is what the saved states take.
func (h *hybrid) checkpointBytes() int64 {
	if h == nil {
		return 0
	}
	return int64(len(h.state.saved)) * int64(h.stateFloats()) * 4
}
