package vk

import (
	"fmt"
	"slices"

	"vkchat/runtime/backend"
	"vkchat/runtime/plan"

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
func (c *cache) stateBuffers() (out []*vulkan.Buffer) {
	for l := range c.convState {
		if c.convState[l] != nil {
			out = append(out, c.convState[l])
		}
		if c.mat[l] != nil { // none for a short convolution (shortconv.go)
			out = append(out, c.mat[l])
		}
	}
	return out
}

// allocateState creates the recurrent layers' state buffers as p's state
// slots lay them out, empty.
func (c *cache) allocateState(d *gpu, p *plan.Plan) error {
	if len(p.State) == 0 {
		return nil
	}
	c.convState, c.mat = make([]*vulkan.Buffer, len(p.Layers)), make([]*vulkan.Buffer, len(p.Layers))
	for _, s := range p.State {
		what := "short conv"
		switch s.Mixer {
		case plan.MixDeltaNet:
			what = "DeltaNet"
		case plan.MixMamba2:
			what = "Mamba2"
		}
		var err error
		if c.convState[s.Layer], err = d.NewBuffer(fmt.Sprintf("%s conv state, layer %d", what, s.Layer), uint64(4*s.ConvFloats), vulkan.MemDevice); err != nil {
			return err
		}
		c.stateBytes += c.convState[s.Layer].Size
		if s.MatrixFloats > 0 {
			if c.mat[s.Layer], err = d.NewBuffer(fmt.Sprintf("%s matrix state, layer %d", what, s.Layer), uint64(4*s.MatrixFloats), vulkan.MemDevice); err != nil {
				return err
			}
			c.stateBytes += c.mat[s.Layer].Size
		}
	}
	return c.resetState(d)
}

// recurrent reports whether the model keeps a state.
func (c *cache) recurrent() bool { return c.stateBytes > 0 }

// resetState empties every layer's state.
func (c *cache) resetState(d *gpu) error {
	bufs := c.stateBuffers()
	c.state.pos = 0
	if len(bufs) == 0 {
		return nil
	}
	return d.Zero(bufs...)
}

// stateAt checks that a step at pos continues the state: pos 0 starts over
// from the empty state; any other position must be where the state is.
func (c *cache) stateAt(d *gpu, pos int) error {
	if !c.recurrent() {
		return nil
	}
	if pos == 0 {
		return c.resetState(d)
	}
	if pos != c.state.pos {
		return fmt.Errorf("vulkan backend: the recurrent state is at position %d, not %d: rewind to a checkpoint (StateBackend.Rewind) and feed the tokens after it", c.state.pos, pos)
	}
	return nil
}

// Checkpoint implements backend.StateBackend: the state buffers are read
// back into host memory.
func (b *Backend) Checkpoint() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cache.recurrent() || b.closed {
		return
	}
	b.cache.checkpoint()
}

// checkpoint saves the state at its position, unless the last checkpoint
// is there, dropping the oldest past maxCheckpoints.
func (c *cache) checkpoint() {
	st := &c.state
	if n := len(st.saved); n > 0 && st.saved[n-1].pos == st.pos {
		return
	}
	var data []byte
	if len(st.saved) >= maxCheckpoints {
		data = st.saved[0].data
		st.saved = slices.Delete(st.saved, 0, 1)
	} else {
		data = make([]byte, c.stateBytes)
	}
	off := uint64(0)
	for _, r := range c.stateBuffers() {
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
	if !b.cache.recurrent() {
		return pos
	}
	return b.cache.rewind(b.d, pos)
}

// rewind goes back to the last checkpoint at or before pos (or the empty
// state at 0) and returns its position.
func (c *cache) rewind(d *gpu, pos int) int {
	st := &c.state
	for len(st.saved) > 0 && st.saved[len(st.saved)-1].pos > pos {
		st.saved = st.saved[:len(st.saved)-1]
	}
	if len(st.saved) == 0 {
		if err := c.resetState(d); err != nil {
			st.pos = -1 // unknown: every Forward but one at 0 is refused
		}
		return 0
	}
	cp := st.saved[len(st.saved)-1]
	off := uint64(0)
	for _, r := range c.stateBuffers() {
		if err := r.Write(0, cp.data[off:off+r.Size]); err != nil {
			if err := c.resetState(d); err != nil {
				st.pos = -1
			}
			return 0
		}
		off += r.Size
	}
	st.pos = cp.pos
	return cp.pos
}

// DropCheckpoint implements backend.CheckpointDropper.
func (b *Backend) DropCheckpoint(pos int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := &b.cache.state
	st.saved = slices.DeleteFunc(st.saved, func(c vkCheckpoint) bool { return c.pos == pos })
}

// Checkpoints implements backend.StateBackend.
func (b *Backend) Checkpoints() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.cache.recurrent() {
		return nil
	}
	out := make([]int, len(b.cache.state.saved))
	for i, c := range b.cache.state.saved {
		out[i] = c.pos
	}
	return out
}

// checkpointBytes is the host memory the saved states take.
func (c *cache) checkpointBytes() int64 {
	if !c.recurrent() {
		return 0
	}
	return int64(len(c.state.saved)) * int64(c.stateBytes)
}
