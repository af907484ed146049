package engine

import (
	"errors"
	"fmt"
	"math"
)

// ErrNonFinite is a forward pass that produced NaN or +Inf logits: the
// model file's weights hold such values (or overflow them), and what the
// sampler would draw from them is noise. The reply stops with it rather
// than printing garbage, and nothing downstream (logprobs, exports) sees
// a value JSON cannot hold.
var ErrNonFinite = errors.New("the model's output is not finite")

// checkFinite checks the distribution a step draws from; it runs once per
// step, over the vocabulary's logits or the head a device reduced them
// to, so the common case is one cheap pass (allFinite). -Inf is a masked
// token and allowed, unless every logit is -Inf.
func checkFinite(nd nextDist, step int, model string) error {
	logits := nd.logits
	if h := nd.head; h != nil {
		// The device's reduction: its maximum and sum stand for the
		// vocabulary the head leaves out.
		if !finite(float64(h.Max)) || !finite(h.Z) {
			return nonFiniteErr(step, model, fmt.Sprintf("a maximum of %v and a sum of %v over the logits", h.Max, h.Z))
		}
		logits = h.Logits
	}
	if len(logits) == 0 || allFinite(logits) {
		return nil
	}
	// Something is not finite: say what, and how much of it.
	nan, inf, negInf := 0, 0, 0
	for _, x := range logits {
		switch {
		case x != x:
			nan++
		case x > math.MaxFloat32:
			inf++
		case x < -math.MaxFloat32:
			negInf++
		}
	}
	switch {
	case nan > 0:
		return nonFiniteErr(step, model, fmt.Sprintf("NaN in %d of %d logits", nan, len(logits)))
	case inf > 0:
		return nonFiniteErr(step, model, fmt.Sprintf("+Inf in %d of %d logits", inf, len(logits)))
	case negInf == len(logits):
		return nonFiniteErr(step, model, "every logit -Inf")
	}
	return nil
}

// allFinite is the test the common case takes: x*0 is 0 for a finite x
// and NaN for NaN or ±Inf, and NaN survives the sums; four independent
// sums keep the adds from waiting on each other, several times faster
// than a comparison per logit (the classifying loop) on a large
// vocabulary (docs/benchmarks.md, "runtime/engine: the finiteness check of
// a step's logits").
func allFinite(xs []float32) bool {
	var a, b, c, d float32
	i := 0
	for ; i+4 <= len(xs); i += 4 {
		a += xs[i] * 0
		b += xs[i+1] * 0
		c += xs[i+2] * 0
		d += xs[i+3] * 0
	}
	for ; i < len(xs); i++ {
		a += xs[i] * 0
	}
	return a+b+c+d == 0
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func nonFiniteErr(step int, model, what string) error {
	return fmt.Errorf("%w: %s at reply token %d; the model file (%s) holds NaN or infinite weights, or overflows them: try another file or quantization", ErrNonFinite, what, step, model)
}
