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
	}
	return ""
}

var settingOrder = []string{SetTemperature, SetTopP, SetTopK, SetMinP, SetRepeat, SetSeed}

// settingItems renders each setting as "name value"; the one named changed
// stands out so a key press visibly lands.
func settingItems(st theme.Styles, p sample.Params, changed string) []string {
	items := make([]string, 0, len(settingOrder))
	for _, name := range settingOrder {
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
