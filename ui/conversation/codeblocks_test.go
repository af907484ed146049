package conversation

import (
	"slices"
	"testing"
)

func TestCodeBlocks(t *testing.T) {
	cases := []struct {
		name, md string
		want     []string
	}{
		{"one", "Here:\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\nDone.", []string{"func main() {\n\tprintln(\"hi\")\n}"}},
		{"two, tildes", "```\na\n```\ntext\n~~~sh\nls -l\n~~~", []string{"a", "ls -l"}},
		{"a longer fence holds a shorter one", "````md\n```\nx\n```\n````", []string{"```\nx\n```"}},
		{"unclosed (a reply cut short)", "```py\nprint(1)", []string{"print(1)"}},
		{"inline backticks are no fence", "use ```x``` inline\n", nil},
		{"indented four spaces is no fence", "    ```\n    code\n    ```", nil},
		{"empty block", "```\n```", []string{""}},
		{"none", "plain text", nil},
	}
	for _, tc := range cases {
		if got := CodeBlocks(tc.md); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
