// Package uitest holds the fixtures the ui packages' tests share: a
// thinking model's token stream, a reply with every Markdown block kind,
// and the splitting of text into token-like pieces. Internal to ui/, so
// only its tests import it.
package uitest

import (
	"regexp"
	"strings"
	"time"

	"vkchat/runtime/engine"

	tea "github.com/charmbracelet/bubbletea"
)

// ThinkingTokens is what the engine emits for "<think>\nHmm\n</think>\n\nHi!".
func ThinkingTokens() []engine.TokenInfo {
	return []engine.TokenInfo{
		{Piece: "<think>", Thinking: true, Duration: 100 * time.Millisecond},
		{Piece: "\nHmm\n", Thought: "\nHmm\n", Thinking: true, Duration: 200 * time.Millisecond},
		{Piece: "</think>", Thinking: true, Duration: 300 * time.Millisecond},
		{Piece: "\n\nHi", Answer: "Hi", Duration: 400 * time.Millisecond},
		{Piece: "!", Answer: "!", Duration: 500 * time.Millisecond},
	}
}

// MarkdownReply has every block kind the transcript renders: a heading,
// emphasis, a list, a table and a fenced code block with a tab.
const MarkdownReply = "## Counting lines\n\nUse **two** steps and *no* regexp:\n\n" +
	"- read the file with `os.ReadFile`\n- count the newlines\n\n" +
	"| step | cost |\n|------|-----:|\n| read | 2 ms |\n| count | 1 ms |\n\n" +
	"```go\nfunc count(b []byte) int {\n\treturn bytes.Count(b, []byte(\"\\n\"))\n}\n```\n\nThat is all."

var pieceRE = regexp.MustCompile(`\s*\S+|\s+`)

// Pieces splits text into the token pieces a model might emit: each run of
// blank space stays with the word after it.
func Pieces(text string) []string { return pieceRE.FindAllString(text, -1) }

var keyTypes = map[string]tea.KeyType{
	"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "left": tea.KeyLeft, "right": tea.KeyRight,
	"up": tea.KeyUp, "down": tea.KeyDown, "home": tea.KeyHome, "end": tea.KeyEnd, "pgup": tea.KeyPgUp,
	"pgdown": tea.KeyPgDown, "f1": tea.KeyF1, "ctrl+c": tea.KeyCtrlC, "ctrl+n": tea.KeyCtrlN,
	"ctrl+r": tea.KeyCtrlR, "ctrl+j": tea.KeyCtrlJ, "backspace": tea.KeyBackspace, "delete": tea.KeyDelete,
	"ctrl+a": tea.KeyCtrlA, "ctrl+e": tea.KeyCtrlE, "ctrl+u": tea.KeyCtrlU, "ctrl+k": tea.KeyCtrlK,
	"ctrl+w": tea.KeyCtrlW, "space": tea.KeySpace,
}

// KeyMsg builds the message a terminal key produces, from the name
// bubbletea gives it ("alt+t", "enter", "h").
func KeyMsg(name string) tea.KeyMsg {
	alt := false
	if rest, ok := strings.CutPrefix(name, "alt+"); ok && rest != "" {
		alt, name = true, rest
	}
	if kt, ok := keyTypes[name]; ok {
		return tea.KeyMsg{Type: kt, Alt: alt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name), Alt: alt}
}
