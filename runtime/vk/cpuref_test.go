package vk

import (
	"testing"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/plan"
)

// cpuFor is the CPU backend on m's plan, the reference these tests hold the
// Vulkan backend to.
func cpuFor(t testing.TB, m *arch.Model, opts backend.Options) (*cpu.Backend, error) {
	t.Helper()
	p, err := plan.Resolve(m, opts.ContextSize)
	if err != nil {
		return nil, err
	}
	return cpu.New(p, opts)
}
