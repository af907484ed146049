package vk

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"vkchat/runtime/quant"
	"vkchat/runtime/vk/vulkan"
	"vkchat/shaders"
)

// gpu is a Vulkan device as the forward pass uses it: the device, the
// kernel layout for its kind (tuning.go), the largest part a matrix is
// split into, and the forward pass's own shaders (package shaders) by name.
type gpu struct {
	*vulkan.Device

	// tune is the kernel layout for this kind of device; tests swap it.
	tune tuning

	// partBytes caps one part of a split matrix (0: only the device's view
	// limits); tests lower it to exercise splitting.
	partBytes uint64

	scratch0 *vulkan.Buffer // bound to bindings a kernel variant does not use
	sink0    *vulkan.Buffer // bound, as written, to a write binding a phase does not use (writeSink)
	gelu     *vulkan.Buffer // quant.GELUTable as f32 bits (geluArg)
	trace    *[]*vulkan.Buffer
	code     map[string][]uint32

	// xqLast is the last quantize dispatch of the integer-dot mat-vec
	// (matvec_idot.go), reused by the mat-vecs that read the same input.
	xqLast xqMemo
}

// openGPU opens the Vulkan device index (-1: vulkan.Choose's) for the
// forward pass.
func openGPU(index int) (*gpu, error) {
	d, err := vulkan.Open(index)
	if err != nil {
		return nil, err
	}
	g := newGPU(d)
	if g.tune, err = g.tune.withEnv(os.Getenv); err != nil {
		d.Close()
		return nil, err
	}
	d.SpinWait = g.tune.spinFence
	return g, nil
}

func newGPU(d *vulkan.Device) *gpu {
	g := &gpu{Device: d, tune: tuningFor(d.Info.Type), code: map[string][]uint32{}}
	// Matrices are split by rows into parts no larger than a quarter of the
	// largest allowed allocation, so no tensor needs one bigger than that.
	if m := d.Info.Features.MaxAllocationSize; m > 0 {
		g.partBytes = m / 4
	}
	return g
}

// kernel is the pipeline for the embedded shader name (shaders/spv) with
// specialization constants spec; see vulkan.Device.Kernel.
func (g *gpu) kernel(name string, push uint32, spec ...uint32) (*vulkan.Kernel, error) {
	code, ok := g.code[name]
	if !ok {
		var err error
		if code, err = shaders.SPIRV(name); err != nil {
			return nil, err
		}
		g.code[name] = code
	}
	return g.Kernel(name, code, push, spec...)
}

// track collects the buffers created from now on into *dst (nil: stop),
// so a backend on a shared device can release its own.
func (g *gpu) track(dst *[]*vulkan.Buffer) {
	g.trace = dst
	g.TrackBuffers(dst)
}

// dummy is the buffer bound where a kernel variant leaves a binding unused:
// the device's own, not the backend being built's.
func (g *gpu) dummy() (*vulkan.Buffer, error) { return g.own(&g.scratch0, "unused binding") }

// own is *b, made on first use: a small buffer of the device's own, left
// out of the backend being built's list (track).
func (g *gpu) own(b **vulkan.Buffer, name string) (*vulkan.Buffer, error) {
	if *b == nil {
		g.TrackBuffers(nil)
		nb, err := g.NewBuffer(name, 256, vulkan.MemDevice)
		g.TrackBuffers(g.trace)
		if err != nil {
			return nil, err
		}
		*b = nb
	}
	return *b, nil
}

// writeSink is the buffer bound, and declared written, where a phase of a
// two-phase kernel leaves the other phase's output binding unused (the
// exact mat-vec's product and XQW). The validation layer counts every
// binding the shader writes anywhere as written by each dispatch, so the
// unused-binding buffer there would read as written by one product and
// read by the next with no barrier between them; the recorder orders the
// sink's writers instead. The device's own, like dummy.
func (g *gpu) writeSink() (*vulkan.Buffer, error) { return g.own(&g.sink0, "unused written binding") }

// geluArg is the binding of a kernel's GELU table (common.glsl's
// gelu_f16): quant.GELUTable, the CPU backend's own entries, uploaded once
// per device, where use says the variant applies GELU (ACT 1); the unused
// binding's buffer otherwise, so a model without GELU never uploads it.
func (g *gpu) geluArg(use bool) (vulkan.Arg, error) {
	if !use {
		dum, err := g.dummy()
		return vulkan.Arg{B: dum, Format: fmtU32}, err
	}
	if g.gelu == nil {
		tab := quant.GELUTable()
		raw := make([]byte, 4*len(tab))
		for i, v := range tab {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		g.TrackBuffers(nil)
		b, err := g.NewBuffer("GELU table", uint64(len(raw)), vulkan.MemDevice)
		g.TrackBuffers(g.trace)
		if err != nil {
			return vulkan.Arg{}, fmt.Errorf("GELU table: %w", err)
		}
		if err := b.Write(0, raw); err != nil {
			b.Release()
			return vulkan.Arg{}, fmt.Errorf("GELU table: %w", err)
		}
		g.gelu = b
	}
	return vulkan.Arg{B: g.gelu, Format: fmtU32}, nil
}

func alignUp(n, a uint64) uint64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}
