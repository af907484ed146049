package arch

import (
	"fmt"
	"strings"
)

// LayerKinds counts the layers of each kind, in the order kinds first
// appear, e.g. "4 shortconv + 2 attention".
func (m *Model) LayerKinds() string {
	var kinds []LayerKind
	count := map[LayerKind]int{}
	for i := range m.Layers {
		k := m.Layers[i].Config.Kind
		if count[k] == 0 {
			kinds = append(kinds, k)
		}
		count[k]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", count[k], k)
	}
	return strings.Join(parts, " + ")
}

// ShortConvStateFloats is one short-convolution layer's state: the last
// L-1 inputs of each channel.
func (c *Config) ShortConvStateFloats() int {
	if c.ShortConvL == 0 {
		return 0
	}
	return (c.ShortConvL - 1) * c.Embd
}

// shortConvStateBytes is the state of every short-convolution layer.
func (m *Model) shortConvStateBytes() int64 {
	return int64(m.recurrentOf(KindShortConv)) * int64(m.ShortConvStateFloats()) * 4
}

// shortConvStateTerm is StateFormula's term for the short convolutions,
// e.g. "4 shortconv layers × (3−1) taps × 256 embd × 4 B"; "" without them.
func (m *Model) shortConvStateTerm() string {
	n := m.recurrentOf(KindShortConv)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d shortconv %s × (%d−1) taps × %d embd × 4 B", n, plural(n, "layer"), m.ShortConvL, m.Embd)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
