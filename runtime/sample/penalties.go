package sample

import "slices"

// penalize applies llama.cpp's repetition penalties to logits in place,
// using the last p.RepeatLastN tokens of history, and reports whether any
// logit may have changed. window is scratch space reused between calls so
// that counting needs no map.
//
// As in llama.cpp, the repeat penalty divides a positive logit and
// multiplies a non-positive one, so it always pushes a seen token down;
// presence and frequency penalties are then subtracted
// (count·frequency + presence).
func penalize(logits []float32, history []int32, p Params, window *[]int32) bool {
	if !penalizes(p, history) {
		return false
	}
	if p.RepeatLastN > 0 && len(history) > p.RepeatLastN {
		history = history[len(history)-p.RepeatLastN:]
	}
	w := append((*window)[:0], history...)
	slices.Sort(w)
	*window = w
	for i := 0; i < len(w); {
		id := w[i]
		j := i + 1
		for j < len(w) && w[j] == id {
			j++
		}
		count := j - i
		i = j
		// History from another vocabulary or a corrupt cache must not
		// index out of range.
		if id < 0 || int(id) >= len(logits) {
			continue
		}
		l := logits[id]
		if l <= 0 {
			l *= p.RepeatPenalty
		} else {
			l /= p.RepeatPenalty
		}
		l -= float32(count)*p.FrequencyPenalty + p.PresencePenalty
		if l != l {
			// Extreme penalties overflow to ±Inf and Inf−Inf is NaN,
			// which would break the ranking's total order.
			l = negInf
		}
		logits[id] = l
	}
	return true
}

// penalizes reports whether p's penalties change any logit given history.
func penalizes(p Params, history []int32) bool {
	if p.RepeatLastN == 0 || len(history) == 0 {
		return false
	}
	return p.RepeatPenalty != 1 || p.PresencePenalty != 0 || p.FrequencyPenalty != 0
}
