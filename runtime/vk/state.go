package vk

import (
	"fmt"
	"slices"

	"vkchat/runtime/backend"

	"vkchat/runtime/vk/vulkan"
)

// maxCheckpoints is how many saved states the backend keeps, as the CPU
// backend does.
const maxCheckpoints = 8

// vkState is where the recurrent state is (the position after the last
// token folded in) and its saved copies, host memory read back from the
// device's state buffers.
type vkState struct {
	pos   int
	saved []vkCheckpoint
}

type vkCheckpoint struct {
	pos  int
	data []byte // every state buffer in layer order, conv then matrix
}

var _ backend.StateBackend = (*Backend)(nil)

// stateBuffers lists the state buffers in checkpoint order.
func (dn *dnBuffers) stateBuffers() (out []*vulkan.Buffer) {
	for l := range dn.convState {
		if dn.convState[l] != nil {
			out = append(out, dn.convState[l])
		}
		if dn.mat[l] != nil { // none for a short convolution (shortconv.go)
			out = append(out, dn.mat[l])
		}
	}
	return out
}

// recurrent reports whether the model keeps a state.
func (b *Backend) recurrent() bool { return b.dn != nil && b.dn.stateBytes > 0 }

// resetState empties every layer's state.
func (b *Backend) resetState() error {
	bufs := b.dn.stateBuffers()
	b.dn.state.pos = 0
	if len(bufs) == 0 {
		return nil
	}
	return b.d.Zero(bufs...)
}

// stateAt checks that a step at pos continues the state: pos 0 starts over
// from the empty state; any other position must be where the state is.
func (b *Backend) stateAt(pos int) error {
	if !b.recurrent() {
		return nil
	}
	if pos == 0 {
		return b.resetState()
	}
	if pos != b.dn.state.pos {
		return fmt.Errorf("vulkan backend: the recurrent state is at position %d, not %d: rewind to a checkpoint (StateBackend.Rewind) and feed the tokens after it", b.dn.state.pos, pos)
	}
	return nil
}

// Checkpoint implements backend.StateBackend: the state buffers are read
// back into host memory.
func (b *Backend) Checkpoint() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.recurrent() || b.closed {
		return
	}
	st := &b.dn.state
	if n := len(st.saved); n > 0 && st.saved[n-1].pos == st.pos {
		return
	}
	var data []byte
	if len(st.saved) >= maxCheckpoints {
		data = st.saved[0].data
		st.saved = slices.Delete(st.saved, 0, 1)
	} else {
		data = make([]byte, b.dn.stateBytes)
	}
	off := uint64(0)
	for _, r := range b.dn.stateBuffers() {
		if err := r.Read(0, data[off:off+r.Size]); err != nil {
			return // a lost device: the next Forward says so
		}
		off += r.Size
	}
	st.saved = append(st.saved, vkCheckpoint{pos: st.pos, data: data})
}

// Rewind implements backend.StateBackend.
func (b *Backend) Rewind(pos int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.recurrent() {
		return pos
	}
	st := &b.dn.state
	for len(st.saved) > 0 && st.saved[len(st.saved)-1].pos > pos {
		st.saved = st.saved[:len(st.saved)-1]
	}
	if len(st.saved) == 0 {
		if err := b.resetState(); err != nil {
			st.pos = -1 // unknown: every Forward but one at 0 is refused
		}
		return 0
	}
	cp := st.saved[len(st.saved)-1]
	off := uint64(0)
	for _, r := range b.dn.stateBuffers() {
		if err := r.Write(0, cp.data[off:off+r.Size]); err != nil {
			if err := b.resetState(); err != nil {
				st.pos = -1
			}
			return 0
		}
		off += r.Size
	}
	st.pos = cp.pos
	return cp.pos
}

// Checkpoints implements backend.StateBackend.
func (b *Backend) Checkpoints() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.recurrent() {
		return nil
	}
	out := make([]int, len(b.dn.state.saved))
	for i, c := range b.dn.state.saved {
		out[i] = c.pos
	}
	return out
}

func (b *Backend) checkpointBytes() int64 {
	if !b.recurrent() {
		return 0
	}
	return int64(len(b.dn.state.saved)) * int64(b.dn.stateBytes)
}
