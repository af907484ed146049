package synth

// lfm2Conv says whether synthetic lfm2 layer l is a short convolution:
// LFM2 350M interleaves ten convolution layers with six attention layers;
// here every third layer attends (2 and 5 of 6), the rest convolve.
func lfm2Conv(l int) bool { return l%3 != 2 }

// lfm2L is the synthetic lfm2's kernel length, the real models' 3.
const lfm2L = 3

func lfm2Keys(s Shape, _ int) map[string]any {
	perLayer := make([]int32, s.Layers)
	for l := range perLayer {
		if !lfm2Conv(l) {
			perLayer[l] = int32(s.KVHeads)
		}
	}
	return map[string]any{
		"rope.freq_base":          float32(1e6),
		"attention.head_count_kv": perLayer, // 0: a convolution layer
		"shortconv.l_cache":       uint32(lfm2L),
	}
}

// shortConvSpecs are a convolution layer's mixer tensors (after attn_norm).
func shortConvSpecs(p string, s Shape) []spec {
	return []spec{
		{p + "shortconv.in_proj.weight", s.Embd, 3 * s.Embd, false, 0},
		{p + "shortconv.conv.weight", lfm2L, s.Embd, false, 0},
		{p + "shortconv.out_proj.weight", s.Embd, s.Embd, false, 0},
	}
}
