// Package panels draws the side panels of the chat UI (sampler settings,
// speed, memory, next-token probabilities), the side column that stacks
// them (side.go: which fit, in what order), the compact status bar that
// replaces them on narrow terminals, and the title bar and the separator
// with the status message (title.go). Every function here is a pure
// rendering of the data it is given into rows of a fixed width.
package panels

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bytes formats n with binary units ("1.5 GiB"), the units memory is
// allocated in.
func Bytes(n int64) string {
	const unit = 1024
	if n < 0 {
		return "-" + Bytes(-n)
	}
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := -1
	for v >= unit && i < len(units)-1 {
		v /= unit
		i++
	}
	if v < 10 {
		return fmt.Sprintf("%.2f %s", v, units[i])
	}
	if v < 100 {
		return fmt.Sprintf("%.1f %s", v, units[i])
	}
	return fmt.Sprintf("%.0f %s", v, units[i])
}

// ExactBytes formats n as a grouped byte count ("1,048,576 B").
func ExactBytes(n int64) string { return Grouped(n) + " B" }

// Grouped writes n with thousands separators.
func Grouped(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Duration formats d at a precision that suits its size.
func Duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0ms"
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		m := int(d / time.Minute)
		s := int((d % time.Minute) / time.Second)
		return fmt.Sprintf("%dm%02ds", m, s)
	}
}

// Rate formats tokens per second; "—" when there is no measurement yet.
func Rate(tps float64) string {
	if tps <= 0 {
		return "—"
	}
	if tps < 10 {
		return fmt.Sprintf("%.2f tok/s", tps)
	}
	return fmt.Sprintf("%.1f tok/s", tps)
}

// PerSecond is count/d in events per second, 0 when d is not positive.
func PerSecond(count int, d time.Duration) float64 {
	if d <= 0 || count <= 0 {
		return 0
	}
	return float64(count) / d.Seconds()
}

// Percent formats a probability as a percentage with a resolution that
// still tells small ones apart.
func Percent(p float32) string {
	switch {
	case p <= 0:
		return "0%"
	case p < 0.001:
		return "<0.1%"
	default:
		return fmt.Sprintf("%.1f%%", p*100)
	}
}

// Count formats a parameter count the way model cards do ("1.1B").
func Count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	default:
		return strconv.FormatInt(n, 10)
	}
}
