// glu is a gated unit of the gate product g and the up product u, the
// activation chosen by the including kernel's ACT: act(g)·u (SiLU or
// GELU-tanh), or with ACT 2 ggml's swiglu_oai with gpt-oss's constants
// (α 1.702, limit 7): the gate clamped from above, up from both sides and
// plus one, as the CPU backend's swigluOAI.
// With ACT 3, SiLU as the CPU backend's silu (ggml's x/(1 + expf(-x))):
// e^-x its float64 exp rounded once (exp_exact), the sum and the quotient
// each rounded to f32, for a model whose path rounds as the CPU's
// (Matrix.cpuOrder). Past -x = 88, exp_exact's clamp, e^-x is e^88 until
// f32's exp overflows: silu's magnitude there is below 4e-37 either way.
// ACT 4 is swiglu_oai so (the CPU backend's swigluOAI).
float silu_cpu(float x) {
	float e = -x >= 88.72283935546875 ? 1.0 / 0.0 : exp_exact(-x);
	precise float d = 1.0 + e;
	precise float y = x / d;
	return y;
}

float glu(float g, float u) {
	if (ACT == 3) {
		precise float y = silu_cpu(g) * u;
		return y;
	}
	if (ACT == 4) {
		// swiglu_oai as the CPU backend's swigluOAI: α·-x rounded to f32,
		// its exp as silu_cpu's
		float x = min(g, 7.0);
		float yv = clamp(u, -7.0, 7.0);
		precise float ax = 1.702 * -x;
		float e = ax >= 88.72283935546875 ? 1.0 / 0.0 : exp_exact(ax);
		precise float d = 1.0 + e;
		precise float gx = x / d;
		precise float y1 = yv + 1.0;
		precise float y = gx * y1;
		return y;
	}
	if (ACT == 2) {
		float x = min(g, 7.0);
		float yv = clamp(u, -7.0, 7.0);
		return x / (1.0 + exp(1.702 * -x)) * (yv + 1.0);
	}
	return act(g) * u;
}
