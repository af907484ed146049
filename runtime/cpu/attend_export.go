package cpu

// AttendHead is the CPU backend's attention for one query head over span
// cached positions (keys and values as consecutive rows of len(q)), with
// scale unscaled by the soft-cap and f16 as with an F16 cache: the oracle
// the Vulkan kernels' tests hold their attention against, the same code
// (native loops where they exist) the backend runs.
func AttendHead(q, keys, vals, out []float32, span int, scale, softcap float32, f16 bool) {
	attendOnline(q, keys, vals, out, span, scale, softcap, make([]float32, len(q)), f16)
}
