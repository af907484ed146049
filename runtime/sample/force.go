package sample

import "fmt"

// Force runs the chain on logits like Sample, for the candidates and the
// funnel, but takes token instead of drawing one: the user chose an
// alternative. The generator is not advanced, so what follows a forced
// token draws the numbers it would have drawn at that point.
func (s *Sampler) Force(logits []float32, history []int32, token int32) (Result, error) {
	if token < 0 || int(token) >= len(logits) {
		return Result{Token: -1}, fmt.Errorf("forced token %d is outside the %d-token vocabulary", token, len(logits))
	}
	st, ok := s.evaluate(logits, history)
	if !ok {
		return Result{Token: -1}, fmt.Errorf("empty vocabulary")
	}
	res := s.result(st, token)
	res.Funnel[5].Stage = StageForced
	return res, nil
}

// ForceHead is Force on a head; ok is false when token is not in it (the
// caller then reads the whole logits and uses Force).
func (s *Sampler) ForceHead(h Head, token int32) (Result, bool) {
	pos := -1
	for i, id := range h.IDs {
		if id == token {
			pos = i
			break
		}
	}
	if pos < 0 || pos >= len(h.Logits) {
		return Result{}, false
	}
	st, ok := s.evaluateHead(h)
	if !ok {
		return Result{}, false
	}
	res := s.headResult(h, st, int32(pos))
	res.Funnel[5].Stage = StageForced
	return res, true
}
