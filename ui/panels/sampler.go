package panels

import (
	"fmt"
	"strconv"

	"vkchat/runtime/sample"
	"vkchat/ui/theme"
)

// Setting names, shared with the UI so it can say which one just changed.
const (
	SetTemperature = "temp"
	SetTopP        = "top-p"
	SetTopK        = "top-k"
	SetMinP        = "min-p"
	SetRepeat      = "repeat"
	SetSeed        = "seed"
	SetPresence    = "presence"
	SetFrequency   = "frequency"
)

// SettingValue formats one sampler setting the way the panels show it,
// naming the values that switch a stage off.
func SettingValue(p sample.Params, name string) string {
	switch name {
	case SetTemperature:
		if p.Temperature <= 0 {
			return "0 greedy"
		}
		return fmt.Sprintf("%.2f", p.Temperature)
	case SetTopP:
		if p.TopP >= 1 {
			return "off"
		}
		return fmt.Sprintf("%.2f", p.TopP)
	case SetTopK:
		if p.TopK <= 0 {
			return "off"
		}
		return strconv.Itoa(p.TopK)
	case SetMinP:
		if p.MinP <= 0 {
			return "off"
		}
		return fmt.Sprintf("%.2f", p.MinP)
	case SetRepeat:
		if p.RepeatPenalty == 1 {
			return "off"
		}
		return fmt.Sprintf("%.2f", p.RepeatPenalty)
	case SetSeed:
		return strconv.FormatUint(p.Seed, 10)
	case SetPresence:
		return penaltyValue(p.PresencePenalty)
	case SetFrequency:
		return penaltyValue(p.FrequencyPenalty)
	}
	return ""
}

var settingOrder = []string{SetTemperature, SetTopP, SetTopK, SetMinP, SetRepeat, SetSeed}

// settingItems renders each setting as "name value"; the one named changed
// stands out so a key press visibly lands.
func settingItems(st theme.Styles, p sample.Params, changed string) []string {
	items := make([]string, 0, len(settingOrder)+2)
	order := settingOrder
	// The presence and frequency penalties are off unless set: they take
	// room only then (or the moment one is set back to 0).
	for _, pen := range []struct {
		name string
		v    float32
	}{{SetPresence, p.PresencePenalty}, {SetFrequency, p.FrequencyPenalty}} {
		if pen.v != 0 || changed == pen.name {
			order = append(order[:len(order):len(order)], pen.name)
		}
	}
	for _, name := range order {
		v := st.Value.Render(SettingValue(p, name))
		if name == changed {
			v = st.Sampled.Render(SettingValue(p, name))
		}
		items = append(items, st.Label.Render(name)+" "+v)
	}
	return items
}

// SamplerLines shows the current sampler settings in as few rows of width
// cells as they fit.
func SamplerLines(st theme.Styles, p sample.Params, changed string, width int) []string {
	return flow(settingItems(st, p, changed), "   ", width)
}

func penaltyValue(v float32) string {
	if v == 0 {
		return "off"
	}
	return fmt.Sprintf("%.2f", v)
}
