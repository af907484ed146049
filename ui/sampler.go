package ui

import (
	"math"

	"github.com/charmbracelet/bubbles/key"

	"vkchat/runtime/sample"
	"vkchat/ui/panels"
)

// The keys stop at the limits the slash commands check (sample's).
const (
	maxTemperature = sample.MaxTemperature
	minTopP        = sample.MinTopP
	minRepeat      = sample.MinRepeat
	maxRepeat      = sample.MaxRepeat
)

// round2 keeps stepped values on a 0.01 grid so repeated steps show "0.70",
// not "0.70000005".
func round2(x float32) float32 { return float32(math.Round(float64(x)*100) / 100) }

func clamp32(x, lo, hi float32) float32 { return min(max(x, lo), hi) }

func stepTemperature(p sample.Params, dir int) sample.Params {
	p.Temperature = clamp32(round2(p.Temperature+0.1*float32(dir)), 0, maxTemperature)
	return p
}

func stepTopP(p sample.Params, dir int) sample.Params {
	p.TopP = clamp32(round2(p.TopP+0.05*float32(dir)), minTopP, 1)
	return p
}

// stepTopK treats 0 (off) as the largest setting: lowering from off starts
// at 100, raising past 100 switches it off. Steps grow with k so both 1..10
// and 40..100 are a few presses away.
func stepTopK(p sample.Params, dir int) sample.Params {
	k := p.TopK
	if dir < 0 {
		switch {
		case k <= 0:
			k = 100
		case k > 50:
			k -= 10
		case k > 10:
			k -= 5
		case k > 1:
			k--
		}
	} else {
		switch {
		case k <= 0:
		case k < 10:
			k++
		case k < 50:
			k += 5
		case k < 100:
			k += 10
		default:
			k = 0
		}
	}
	p.TopK = k
	return p
}

func stepMinP(p sample.Params, dir int) sample.Params {
	p.MinP = clamp32(round2(p.MinP+0.01*float32(dir)), 0, 1)
	return p
}

func stepRepeat(p sample.Params, dir int) sample.Params {
	p.RepeatPenalty = clamp32(round2(p.RepeatPenalty+0.05*float32(dir)), minRepeat, maxRepeat)
	return p
}

// samplerKey ties one key to the change it makes.
type samplerKey struct {
	binding func(KeyMap) key.Binding
	setting string
	change  func(sample.Params) sample.Params
}

func samplerKeys() []samplerKey {
	down := func(f func(sample.Params, int) sample.Params) func(sample.Params) sample.Params {
		return func(p sample.Params) sample.Params { return f(p, -1) }
	}
	up := func(f func(sample.Params, int) sample.Params) func(sample.Params) sample.Params {
		return func(p sample.Params) sample.Params { return f(p, +1) }
	}
	return []samplerKey{
		{func(k KeyMap) key.Binding { return k.TempDown }, panels.SetTemperature, down(stepTemperature)},
		{func(k KeyMap) key.Binding { return k.TempUp }, panels.SetTemperature, up(stepTemperature)},
		{func(k KeyMap) key.Binding { return k.TopPDown }, panels.SetTopP, down(stepTopP)},
		{func(k KeyMap) key.Binding { return k.TopPUp }, panels.SetTopP, up(stepTopP)},
		{func(k KeyMap) key.Binding { return k.TopKDown }, panels.SetTopK, down(stepTopK)},
		{func(k KeyMap) key.Binding { return k.TopKUp }, panels.SetTopK, up(stepTopK)},
		{func(k KeyMap) key.Binding { return k.MinPDown }, panels.SetMinP, down(stepMinP)},
		{func(k KeyMap) key.Binding { return k.MinPUp }, panels.SetMinP, up(stepMinP)},
		{func(k KeyMap) key.Binding { return k.RepeatDown }, panels.SetRepeat, down(stepRepeat)},
		{func(k KeyMap) key.Binding { return k.RepeatUp }, panels.SetRepeat, up(stepRepeat)},
	}
}
