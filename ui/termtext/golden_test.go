package termtext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestWrapGolden pins how a reply with escapes, wide characters and a long
// word wraps; regenerate with go test ./ui/... -update.
func TestWrapGolden(t *testing.T) {
	const reply = "The\x1b[31m quick\x1b[0m brown fox jumps over the lazy dog.\x1b]52;c;cHduZWQ=\x07 " +
		"東京は日本の首都です。 A supercalifragilisticexpialidocious word\tand\ttabs."
	var b strings.Builder
	for _, w := range []int{8, 13, 30} {
		fmt.Fprintf(&b, "width %d\n", w)
		for _, row := range WrapWords(Glyphs(Sanitize(reply), func(int) int { return 0 }), w) {
			var s strings.Builder
			for _, g := range row {
				s.WriteString(g.Text)
			}
			fmt.Fprintf(&b, "|%s|\n", Fit(s.String(), w))
		}
	}
	golden.RequireEqual(t, []byte(b.String()))
}
