// Package shaders holds the compute kernels: GLSL sources (*.comp, *.glsl),
// compiled by build.sh into the committed SPIR-V under spv/ that the Vulkan
// runtime embeds.
package shaders

import (
	"embed"
	"encoding/binary"
	"fmt"
)

//go:embed spv/*.spv
var spv embed.FS

// SPIRV returns the compiled kernel name (spv/<name>.spv) as 32-bit words.
func SPIRV(name string) ([]uint32, error) {
	b, err := spv.ReadFile("spv/" + name + ".spv")
	if err != nil {
		return nil, fmt.Errorf("shader %s: not embedded (run 'make shaders'): %w", name, err)
	}
	if len(b)%4 != 0 || len(b) < 20 || binary.LittleEndian.Uint32(b) != 0x07230203 {
		return nil, fmt.Errorf("shader %s: %d bytes is not SPIR-V", name, len(b))
	}
	w := make([]uint32, len(b)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w, nil
}
