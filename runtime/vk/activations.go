package vk

import (
	"fmt"

	"vkchat/runtime/vk/vulkan"
)

// activations are a step's working buffers on the device, each sized for
// prefillChunk tokens (a decode step uses the first token's), and the
// logits and the head's result the host reads back.
type activations struct {
	x, qkv, q, att, h *vulkan.Buffer
	o                 *vulkan.Buffer // a branch's output before its post-norm or scale (exec.go branchOut), else nil
	h2                *vulkan.Buffer // up-projection partial sums when its K is split
	xq                *vulkan.Buffer // x rounded to a vec_dot_type for the prefill product (matmul.go)
	attPart           *vulkan.Buffer // split-K decode attention's partials [head][split][dim+2], else nil
	attArrive         *vulkan.Buffer // split-K: finished splits per KV head (zero between steps), else nil
	ropeArrive        *vulkan.Buffer // tuning.ropeInQKV: finished workgroups of the Q|K|V product (zero between dispatches), else nil

	// floats per token of x, qkv, q (and att) and h: the widest layer's
	xStride, qkvStride, qStride, ffStride int

	// a mixture-of-experts model's routing and expert activations (moe.go), else nil
	moe *moeBuffers

	// a hybrid model's short-convolution activations (shortconv.go), else
	// nil; their state is the cache's (cache.convState)
	convBCU, convY *vulkan.Buffer
	// dn is a hybrid model's DeltaNet activations, the gated attention's
	// gate and the shared expert's (deltanet.go); nil for other models.
	dn *dnBuffers
	// mamba is a Mamba2 hybrid's mixer activations (mamba2.go), else nil
	mamba *mamba2Buffers
	mla   *mlaBuffers
	// ple is Gemma 4's per-layer inputs (ple.go), else nil
	ple *pleBuffers

	logits    *vulkan.Buffer // [prefillChunk][vocab]; device-local under the GPU layout (head.go reads it)
	headOut   *vulkan.Buffer // host-visible, the head kernel's result (head.go)
	headParts *vulkan.Buffer // the head's per-workgroup records before the merge

	// bytes counts every scratch buffer made through buffer: these and
	// the step buffers (Memory's Scratch)
	bytes uint64
}

// buffer makes a scratch buffer of floats 32-bit words and counts it.
func (a *activations) buffer(d *gpu, name string, floats int, kind vulkan.MemKind) (*vulkan.Buffer, error) {
	buf, err := d.NewBuffer(name, uint64(4*floats), kind)
	if err != nil {
		return nil, err
	}
	a.bytes += buf.Size
	return buf, nil
}

// readLogits returns the logits of the first n tokens of the last step:
// the mapped memory itself where the logits are host-visible, else a copy
// through the staging buffer (only when the sampler needs the vocabulary).
// Each token's logits are vocab floats.
func (a *activations) readLogits(n, vocab int) ([]byte, error) {
	size := 4 * n * vocab
	if m := a.logits.Mapped(); m != nil {
		return m[:size], nil
	}
	buf := make([]byte, size)
	if err := a.logits.Read(0, buf); err != nil {
		return nil, fmt.Errorf("vulkan backend: reading the logits: %w", err)
	}
	return buf, nil
}

// allocate makes the activations every model has, for prefillChunk tokens
// of c's widths: attention's split-K partials for up to splits workgroups
// per KV head of at most headDim, and o where a branch ends in
// residual.comp (branchOut).
func (a *activations) allocate(d *gpu, heads, splits, headDim int, branchOut bool) error {
	var err error
	n := prefillChunk
	if a.x, err = a.buffer(d, "activations x", n*a.xStride, vulkan.MemDevice); err != nil {
		return err
	}
	if a.qkv, err = a.buffer(d, "activations qkv", n*a.qkvStride, vulkan.MemDevice); err != nil {
		return err
	}
	if a.q, err = a.buffer(d, "activations q", n*a.qStride, vulkan.MemDevice); err != nil {
		return err
	}
	if a.att, err = a.buffer(d, "activations attention", n*a.qStride, vulkan.MemDevice); err != nil {
		return err
	}
	if splits > 0 {
		if a.attPart, err = a.buffer(d, "split-K attention partials", heads*splits*(headDim+2), vulkan.MemDevice); err != nil {
			return err
		}
		// a counter per KV head (at most one per query head) of a decode step's token
		if a.attArrive, err = a.buffer(d, "split-K attention arrivals", heads, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if d.tune.ropeInQKV {
		// the Q|K|V product's finished workgroups, when it rotates (rope.go)
		if a.ropeArrive, err = a.buffer(d, "rotation-epilogue arrivals", 1, vulkan.MemDevice); err != nil {
			return err
		}
	}
	if a.h, err = a.buffer(d, "activations ffn", n*a.ffStride, vulkan.MemDevice); err != nil {
		return err
	}
	if a.h2, err = a.buffer(d, "activations ffn partial sums", n*a.ffStride, vulkan.MemDevice); err != nil {
		return err
	}
	if a.xq, err = a.buffer(d, "activations rounded for the prefill product", n*xqBound(max(a.xStride, a.qStride, a.ffStride)), vulkan.MemDevice); err != nil {
		return err
	}
	if branchOut {
		if a.o, err = a.buffer(d, "activations branch output", n*a.xStride, vulkan.MemDevice); err != nil {
			return err
		}
	}
	return nil
}

// allocateOutputs makes the logits of prefillChunk tokens over a
// vocabulary of vocab and the next-token head's buffers (head.go).
func (a *activations) allocateOutputs(d *gpu, vocab int) error {
	var err error
	if a.logits, err = a.buffer(d, "logits", prefillChunk*vocab, d.tune.logitsKind()); err != nil {
		return err
	}
	if a.headOut, err = a.buffer(d, "next-token head", headWords, vulkan.MemHost); err != nil {
		return err
	}
	a.headParts, err = a.buffer(d, "next-token head, per workgroup", maxHeadGroups*headWords, vulkan.MemDevice)
	return err
}

// zeroed lists the buffers that must start at zero: the activations whose
// padding columns must read as zero, and the arrival counters (the last
// arrival resets them).
func (a *activations) zeroed() []*vulkan.Buffer {
	var moeH, moeH2 *vulkan.Buffer
	if a.moe != nil {
		moeH, moeH2 = a.moe.h, a.moe.h2
	}
	zeroed := []*vulkan.Buffer{a.x, a.qkv, a.q, a.att, a.h, a.h2, a.o, moeH, moeH2, a.attArrive, a.ropeArrive}
	if a.dn != nil {
		zeroed = append(zeroed, a.dn.o, a.dn.shH, a.dn.shH2)
	}
	if a.ple != nil {
		zeroed = append(zeroed, a.ple.in, a.ple.gate)
	}
	var zero []*vulkan.Buffer
	for _, buf := range zeroed {
		if buf != nil {
			zero = append(zero, buf)
		}
	}
	return zero
}
