// glu is a gated unit of the gate product g and the up product u, the
// activation chosen by the including kernel's ACT: act(g)·u (SiLU or
// GELU-tanh), or with ACT 2 ggml's swiglu_oai with gpt-oss's constants
// (α 1.702, limit 7): the gate clamped from above, up from both sides and
// plus one, as the CPU backend's swigluOAI.
float glu(float g, float u) {
	if (ACT == 2) {
		float x = min(g, 7.0);
		float yv = clamp(u, -7.0, 7.0);
		return x / (1.0 + exp(1.702 * -x)) * (yv + 1.0);
	}
	return act(g) * u;
}
