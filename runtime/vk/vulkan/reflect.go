package vulkan

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"
)

// bindingTypes reads the descriptor type of each binding of set 0 from a
// SPIR-V module, so kernels declare their interface in one place: the GLSL.
func bindingTypes(code []uint32) ([]vk.DescriptorType, error) {
	const (
		opTypeImage        = 25
		opTypeSampledImage = 27
		opTypePointer      = 32
		opVariable         = 59
		opDecorate         = 71
		decBlock           = 2
		decBufferBlock     = 3
		decBinding         = 33
		decSet             = 34
		scUniformConstant  = 0
		scUniform          = 2
		scStorageBuffer    = 12
		dimBuffer          = 5
	)
	if len(code) < 5 || code[0] != 0x07230203 {
		return nil, fmt.Errorf("not SPIR-V")
	}
	binding := map[uint32]uint32{}
	set := map[uint32]uint32{}
	deco := map[uint32]uint32{} // struct id -> Block/BufferBlock
	ptr := map[uint32][2]uint32{}
	image := map[uint32][2]uint32{} // id -> dim, sampled
	sampled := map[uint32]uint32{}  // sampled image id -> image id
	type variable struct{ ptrType, id, class uint32 }
	var vars []variable
	for i := 5; i < len(code); {
		n, op := code[i]>>16, code[i]&0xffff
		if n == 0 || i+int(n) > len(code) {
			return nil, fmt.Errorf("malformed SPIR-V at word %d", i)
		}
		w := code[i : i+int(n)]
		switch {
		case op == opDecorate && n >= 3:
			switch w[2] {
			case decBinding:
				binding[w[1]] = w[3]
			case decSet:
				set[w[1]] = w[3]
			case decBlock, decBufferBlock:
				deco[w[1]] = w[2]
			}
		case op == opTypePointer && n == 4:
			ptr[w[1]] = [2]uint32{w[2], w[3]}
		case op == opTypeImage && n >= 9:
			image[w[1]] = [2]uint32{w[3], w[7]}
		case op == opTypeSampledImage && n == 3:
			sampled[w[1]] = w[2]
		case op == opVariable && n >= 4:
			vars = append(vars, variable{w[1], w[2], w[3]})
		}
		i += int(n)
	}
	types := map[uint32]vk.DescriptorType{}
	maxB := -1
	for _, v := range vars {
		b, ok := binding[v.id]
		if !ok || set[v.id] != 0 {
			continue
		}
		p := ptr[v.ptrType]
		var t vk.DescriptorType
		switch {
		case v.class == scStorageBuffer, v.class == scUniform && deco[p[1]] == decBufferBlock:
			t = vk.DescriptorTypeStorageBuffer
		case v.class == scUniform:
			t = vk.DescriptorTypeUniformBuffer
		case v.class == scUniformConstant:
			img, isSampled := p[1], false
			if im, ok := sampled[img]; ok {
				img, isSampled = im, true
			}
			info, ok := image[img]
			if !ok || info[0] != dimBuffer {
				return nil, fmt.Errorf("binding %d: only buffers and texel buffers are supported", b)
			}
			t = vk.DescriptorTypeStorageTexelBuffer
			if isSampled || info[1] == 1 {
				t = vk.DescriptorTypeUniformTexelBuffer
			}
		default:
			continue
		}
		types[b] = t
		maxB = max(maxB, int(b))
	}
	out := make([]vk.DescriptorType, maxB+1)
	for b := 0; b <= maxB; b++ {
		// A binding the compiler dropped as unused (in some variant) still
		// takes its slot; any buffer type will do for it.
		t, ok := types[uint32(b)]
		if !ok {
			t = vk.DescriptorTypeStorageBuffer
		}
		out[b] = t
	}
	return out, nil
}
