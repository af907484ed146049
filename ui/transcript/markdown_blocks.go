package transcript

import "strings"

// markdownBlocks splits text into top-level blocks at blank lines that are
// outside fenced code and not followed by an indented line (which would
// continue a list item). Each block renders on its own, so while a reply
// streams only its last, still open block is rendered again.
func markdownBlocks(text string) []string {
	var blocks []string
	var cur []string
	blank := 0 // blank lines seen since the last text line
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		cur, blank = nil, 0
	}
	for _, line := range strings.Split(text, "\n") {
		if fence == "" && strings.TrimSpace(line) == "" {
			blank++
			continue
		}
		if blank > 0 {
			if line[0] == ' ' || line[0] == '\t' || fence != "" {
				for ; blank > 0; blank-- {
					cur = append(cur, "")
				}
			} else {
				flush()
			}
		}
		cur = append(cur, line)
		if f := fenceMarker(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(line, " "))[len(f):] == "":
				fence = ""
			}
		}
	}
	flush()
	return blocks
}

// fenceMarker returns the run of backticks or tildes that opens or closes a
// fenced code block on line ("" when the line is not a fence).
func fenceMarker(line string) string {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return ""
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return l[:n]
}
