package sampler

import (
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/sample"
	"vkchat/ui/command"
	"vkchat/ui/panels"
)

// KeyMap is the sampler keys. They use Alt so they work while typing:
// the lower-case letter lowers a setting and the upper-case one raises it.
type KeyMap struct {
	TempDown, TempUp     key.Binding
	TopPDown, TopPUp     key.Binding
	TopKDown, TopKUp     key.Binding
	MinPDown, MinPUp     key.Binding
	RepeatDown, RepeatUp key.Binding
	Seed                 key.Binding
}

// DefaultKeyMap documents each pair by its "down" half.
func DefaultKeyMap() KeyMap {
	b := func(k, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(k), key.WithHelp(help, desc))
	}
	quiet := func(k string) key.Binding { return key.NewBinding(key.WithKeys(k)) }
	return KeyMap{
		TempDown: b("alt+t", "alt+t/T", "temp"), TempUp: quiet("alt+T"),
		TopPDown: b("alt+p", "alt+p/P", "top-p"), TopPUp: quiet("alt+P"),
		TopKDown: b("alt+k", "alt+k/K", "top-k"), TopKUp: quiet("alt+K"),
		MinPDown: b("alt+m", "alt+m/M", "min-p"), MinPUp: quiet("alt+M"),
		RepeatDown: b("alt+r", "alt+r/R", "repeat"), RepeatUp: quiet("alt+R"),
		Seed: b("alt+s", "alt+s", "new seed"),
	}
}

// Help is the footer's second row: the live sampler keys.
func (k KeyMap) Help() []key.Binding {
	return []key.Binding{k.TempDown, k.TopPDown, k.TopKDown, k.MinPDown, k.RepeatDown, k.Seed}
}

// Section is the sampler's part of the key reference (F1, the README).
func (k KeyMap) Section() command.KeySection {
	return command.KeySection{Title: "Sampler (while typing too)", Keys: k.Help()}
}

// AltPrefix is factored out of the sampler row when the row would not fit
// otherwise: "alt+ t/T temp • p/P top-p …".
const AltPrefix = "alt+"

// Compact returns the sampler bindings with "alt+" taken out of their
// help text, for narrow footers.
func (k KeyMap) Compact() []key.Binding {
	out := k.Help()
	for i, b := range out {
		h := b.Help()
		b.SetHelp(strings.TrimPrefix(h.Key, AltPrefix), h.Desc)
		out[i] = b
	}
	return out
}

// Key steps the setting msg is bound to; it reports whether msg was one
// of the sampler's keys.
func (s *Sampler) Key(msg tea.KeyMsg) (tea.Cmd, bool) {
	if key.Matches(msg, s.Keys.Seed) {
		return s.DrawSeed(), true
	}
	for _, sk := range s.keys() {
		if key.Matches(msg, sk.binding) {
			s.Changed = sk.setting
			return s.Change(sk.change(s.Params)), true
		}
	}
	return nil, false
}

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
	binding key.Binding
	setting string
	change  func(sample.Params) sample.Params
}

func (s *Sampler) keys() []samplerKey {
	k := s.Keys
	down := func(f func(sample.Params, int) sample.Params) func(sample.Params) sample.Params {
		return func(p sample.Params) sample.Params { return f(p, -1) }
	}
	up := func(f func(sample.Params, int) sample.Params) func(sample.Params) sample.Params {
		return func(p sample.Params) sample.Params { return f(p, +1) }
	}
	return []samplerKey{
		{k.TempDown, panels.SetTemperature, down(stepTemperature)},
		{k.TempUp, panels.SetTemperature, up(stepTemperature)},
		{k.TopPDown, panels.SetTopP, down(stepTopP)},
		{k.TopPUp, panels.SetTopP, up(stepTopP)},
		{k.TopKDown, panels.SetTopK, down(stepTopK)},
		{k.TopKUp, panels.SetTopK, up(stepTopK)},
		{k.MinPDown, panels.SetMinP, down(stepMinP)},
		{k.MinPUp, panels.SetMinP, up(stepMinP)},
		{k.RepeatDown, panels.SetRepeat, down(stepRepeat)},
		{k.RepeatUp, panels.SetRepeat, up(stepRepeat)},
	}
}
