package store

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints models as the aligned table "vkchat models" shows.
func WriteTable(w io.Writer, models []Model) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARCH\tPARAMS\tQUANT\tSIZE\tPATH")
	for _, m := range models {
		arch, params, quant := m.Arch, FormatParams(m.Params), m.Quant
		if m.Err != nil {
			// Keep the row (so it can be removed) but say why it is unusable.
			arch, params, quant = "invalid", "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, dash(arch), params, dash(quant), FormatSize(m.Size), m.Path)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write model table: %w", err)
	}
	for _, m := range models {
		if m.Err != nil {
			if _, err := fmt.Fprintf(w, "\n%s: %v\n", m.Name, m.Err); err != nil {
				return fmt.Errorf("write model table: %w", err)
			}
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// FormatParams writes a parameter count the way model names do: 135M, 1.7B.
func FormatParams(n int64) string {
	switch {
	case n <= 0:
		return "-"
	case n < 1e3:
		return fmt.Sprint(n)
	case n < 1e6:
		return trimFloat(float64(n)/1e3) + "K"
	case n < 1e9:
		return trimFloat(float64(n)/1e6) + "M"
	case n < 1e12:
		return trimFloat(float64(n)/1e9) + "B"
	}
	return trimFloat(float64(n)/1e12) + "T"
}

// trimFloat keeps about three significant digits (135, 12.4, 1.71) and
// drops trailing zeros (1, not 1.00).
func trimFloat(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return trimZero(fmt.Sprintf("%.1f", x))
	}
	return trimZero(fmt.Sprintf("%.2f", x))
}

func trimZero(s string) string {
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// FormatSize writes a byte count in binary units (what ls -h and disk
// tools show).
func FormatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
