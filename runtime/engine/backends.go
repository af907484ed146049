package engine

import (
	"fmt"

	"vkchat/models"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/vk"
)

// Backends lists the names accepted by Options.Backend.
var Backends = []string{"cpu", "vulkan"}

func newBackend(name string, m *models.Model, o backend.Options) (backend.Backend, error) {
	switch name {
	case "", "cpu":
		return cpu.New(m, o)
	case "vulkan":
		return vk.New(m, o)
	}
	return nil, fmt.Errorf("unknown backend %q (choose cpu or vulkan)", name)
}
