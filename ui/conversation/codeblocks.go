package conversation

import "strings"

// CodeBlocks returns the contents of the fenced code blocks of a Markdown
// text, in order, without their fences: what /copy code N copies. A fence
// is three or more backticks or tildes at the start of a line (up to three
// spaces in), and the block ends at a line with at least as many of the
// same character and nothing else, or at the end of the text (a reply
// cut short), as CommonMark reads them.
func CodeBlocks(md string) []string {
	var out []string
	var body []string
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if fence == "" {
			if indent <= 3 {
				if f := fenceOf(trimmed); f != "" && !(f[0] == '`' && strings.Contains(trimmed[len(f):], "`")) {
					fence, body = f, nil
				}
			}
			continue
		}
		if indent <= 3 {
			if f := fenceOf(trimmed); f != "" && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(trimmed[len(f):]) == "" {
				out = append(out, strings.Join(body, "\n"))
				fence = ""
				continue
			}
		}
		body = append(body, line)
	}
	if fence != "" && len(body) > 0 {
		out = append(out, strings.Join(body, "\n"))
	}
	return out
}

// fenceOf is the run of ` or ~ (three or more) a line starts with, or "".
func fenceOf(s string) string {
	if s == "" || (s[0] != '`' && s[0] != '~') {
		return ""
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return s[:n]
}
