package ui

import (
	"fmt"
	"strings"

	"github.com/atotto/clipboard"
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/termtext"
	"vkchat/ui/theme"
)

// Input is the message editor: bubbles/textarea for editing, wrapping,
// word motions and clipboard paste, plus what a chat needs around it: the
// editor grows with its text up to a height, a bracketed paste is cleaned
// of terminal controls, and ↑/↓ on the first/last row walk the history of
// sent lines the way readline does.
type Input struct {
	ta          textarea.Model
	width       int
	maxHeight   int
	placeholder string

	// lastRow is written by the prompt function while the textarea
	// draws: the index of the last row drawn, from which the number of
	// rows the text fills is known. A pointer, so copies of Input share it.
	lastRow *int
	rows    int // rows the text fills at the current width; 0: not known
	// overflowed: the text was taller than the editor, so the textarea's
	// viewport may be scrolled and must be put back once the text fits.
	overflowed bool
	peakRows   int // the most rows the text filled while it overflowed

	history []string
	histPos int    // index into history; len(history) is the unsent line
	draft   string // the unsent line, kept while browsing the history
	err     error  // a refused paste, for the status line
}

const inputPrompt = "> "

// maxInputLines is the most lines the textarea holds; it drops lines past
// it silently, so a paste that would not fit is refused instead.
const maxInputLines = 10000

// maxInputBytes bounds the text: textarea wraps the cursor's whole line
// again on every key, which for a 64 KiB line costs ~80 ms a key and for
// 1 MiB over a second (TestInputLargePaste logs the figures), so a bigger
// paste is refused with a message rather than left to freeze the editor.
const maxInputBytes = 64 << 10

// inputKeys are textarea's default keys, less the ones the chat uses for
// itself: Enter sends (Alt+Enter and Ctrl+J add a line, through
// InsertNewline), Ctrl+N starts a chat, and ↑/↓ are handled here first for
// the history. Ctrl+←/→ also move by words, as in most editors.
func inputKeys() textarea.KeyMap {
	k := textarea.DefaultKeyMap
	k.InsertNewline = key.NewBinding(key.WithDisabled())
	k.LineNext = key.NewBinding(key.WithKeys("down"))
	k.LinePrevious = key.NewBinding(key.WithKeys("up"))
	k.WordForward = key.NewBinding(key.WithKeys("alt+right", "ctrl+right", "alt+f"))
	k.WordBackward = key.NewBinding(key.WithKeys("alt+left", "ctrl+left", "alt+b"))
	return k
}

// NewInput returns a focused, empty editor.
func NewInput() Input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.MaxHeight = 0 // the layout decides; the default (99) also caps lines
	ta.MaxWidth = 0
	ta.KeyMap = inputKeys()
	ta.Cursor.SetMode(cursor.CursorStatic)
	last := new(int)
	ta.SetPromptFunc(len(inputPrompt), func(row int) string {
		*last = row
		if row == 0 {
			return inputPrompt
		}
		return ""
	})
	ta.Focus()
	in := Input{ta: ta, lastRow: last}
	in.SetSize(20, 1)
	return in
}

// Value is the text typed so far.
func (in *Input) Value() string { return in.ta.Value() }

// SetValue replaces the text and puts the cursor at its end.
func (in *Input) SetValue(s string) {
	in.ta.SetValue(cleanInput(s))
	in.changed()
}

// Reset empties the editor and ends any walk through the history.
func (in *Input) Reset() {
	in.ta.Reset()
	in.histPos, in.draft = len(in.history), ""
	in.changed()
}

// SetSize sets the width in cells, prompt included, and the most rows the
// editor may grow to.
func (in *Input) SetSize(width, maxHeight int) {
	width, maxHeight = max(width, len(inputPrompt)+2), max(maxHeight, 1)
	if width == in.width && maxHeight == in.maxHeight {
		return
	}
	in.width, in.maxHeight = width, maxHeight
	in.ta.SetWidth(width)
	in.ta.SetHeight(maxHeight)
	in.changed()
}

// Focus and Blur say whether keys go to the editor (and the cursor shows).
func (in *Input) Focus() { in.ta.Focus() }

// Blur hides the cursor.
func (in *Input) Blur() { in.ta.Blur() }

// Focused reports whether the editor has the keyboard.
func (in *Input) Focused() bool { return in.ta.Focused() }

// TakeError returns and clears the last refused edit, if any.
func (in *Input) TakeError() error {
	err := in.err
	in.err = nil
	return err
}

// cleanInput turns pasted line endings into '\n' and tabs into spaces, and
// drops escape sequences and other controls (a paste from a terminal can
// carry colour codes): what the user sends should look as typed. (The
// textarea's own filter would turn "\r\n" into two line breaks.)
func cleanInput(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = termtext.Sanitize(s)
	return strings.ReplaceAll(s, "\t", strings.Repeat(" ", termtext.TabWidth))
}

// InsertNewline breaks the line at the cursor.
func (in *Input) InsertNewline() { in.insert("\n") }

func (in *Input) insert(s string) {
	s = cleanInput(s)
	if n := len(in.Value()) + len(s); n > maxInputBytes {
		in.err = fmt.Errorf("paste refused: the message would be %d KiB, and the input takes at most %d KiB", (n+1023)>>10, maxInputBytes>>10)
		return
	}
	if n := in.ta.LineCount() + strings.Count(s, "\n"); n > maxInputLines {
		in.err = fmt.Errorf("paste refused: the message would be %d lines, and the input takes at most %d", n, maxInputLines)
		return
	}
	in.ta.InsertString(s)
	in.changed()
}

// Update applies an editing key and reports whether it was one; the
// command, if any, reads the clipboard (Ctrl+V).
func (in *Input) Update(msg tea.KeyMsg) (bool, tea.Cmd) {
	switch {
	case msg.Paste:
		in.insert(string(msg.Runes))
		return true, nil
	case key.Matches(msg, in.ta.KeyMap.Paste):
		return true, readClipboard
	case msg.Type == tea.KeyUp && in.onFirstRow():
		in.browse(-1)
		return true, nil
	case msg.Type == tea.KeyDown && in.onLastRow():
		in.browse(+1)
		return true, nil
	case msg.Type == tea.KeyRunes && msg.Alt && !in.bound(msg):
		// textarea would type the letter of an Alt chord it does not
		// know; here those chords belong to the chat, or to nothing.
		return false, nil
	case msg.Type == tea.KeySpace:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{' '}}
	case msg.Type != tea.KeyRunes && !in.bound(msg):
		return false, nil
	}
	return true, in.apply(msg)
}

// Receive passes the editor the messages its commands produce (a failed
// clipboard read after Ctrl+V) and any the chat has no use for.
func (in *Input) Receive(msg tea.Msg) tea.Cmd {
	if e, ok := msg.(clipboardErrMsg); ok {
		in.err = fmt.Errorf("could not paste from the clipboard: %w", e.err)
		return nil
	}
	return in.apply(msg)
}

type clipboardErrMsg struct{ err error }

// readClipboard reads the system clipboard for Ctrl+V and hands it back
// as a bracketed paste, so it is cleaned and size-checked like one (the
// textarea's own paste would take "\r\n" as two line breaks and keep
// the text of escape sequences).
func readClipboard() tea.Msg {
	s, err := clipboard.ReadAll()
	if err != nil {
		return clipboardErrMsg{err}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true}
}

// inputKey gives a key to the editor and shows an edit it refused.
func (m *Model) inputKey(msg tea.KeyMsg) tea.Cmd {
	if msg.Type == tea.KeyUp && len(m.input.history) == 0 {
		m.input.seedHistory(m.turns)
	}
	_, cmd := m.input.Update(msg)
	m.showInputError()
	return cmd
}

// receiveInput passes the editor a message the chat does not handle.
func (m *Model) receiveInput(msg tea.Msg) tea.Cmd {
	cmd := m.input.Receive(msg)
	m.showInputError()
	return cmd
}

func (m *Model) showInputError() {
	if err := m.input.TakeError(); err != nil {
		m.setError(err.Error())
	}
}

func (in *Input) apply(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	in.changed()
	return cmd
}

// bound reports whether msg is one of the textarea's editing keys.
func (in *Input) bound(msg tea.KeyMsg) bool {
	k := in.ta.KeyMap
	for _, b := range []key.Binding{k.CharacterBackward, k.CharacterForward, k.DeleteAfterCursor,
		k.DeleteBeforeCursor, k.DeleteCharacterBackward, k.DeleteCharacterForward, k.DeleteWordBackward,
		k.DeleteWordForward, k.LineEnd, k.LineNext, k.LinePrevious, k.LineStart, k.Paste, k.WordBackward,
		k.WordForward, k.InputBegin, k.InputEnd, k.UppercaseWordForward, k.LowercaseWordForward,
		k.CapitalizeWordForward, k.TransposeCharacterBackward} {
		if key.Matches(msg, b) {
			return true
		}
	}
	return false
}

// changed notes that the text or its size changed, and puts the
// textarea's view back at the top once the text fits the editor again:
// its viewport only scrolls to keep the cursor in view, so after deleting
// a tall text's lines it would go on showing empty rows below the text
// and hiding its first rows.
func (in *Input) changed() {
	in.rows = 0
	if in.ta.Focused() {
		// SetValue and friends move the cursor without scrolling to it;
		// an Update with no message does.
		in.ta, _ = in.ta.Update(nil)
	}
	in.Height()
	if in.rows > in.maxHeight {
		in.overflowed, in.peakRows = true, max(in.peakRows, in.rows)
		return
	}
	if in.overflowed && in.ta.Focused() {
		// The textarea's viewport answers the mouse wheel (3 rows a
		// notch) even though the program sends it no mouse events; that
		// is the one way in to its scroll offset.
		wheel := tea.MouseMsg{Button: tea.MouseButtonWheelUp, Action: tea.MouseActionPress}
		for i := 0; i*3 < in.peakRows; i++ {
			in.ta, _ = in.ta.Update(wheel)
		}
		in.overflowed, in.peakRows = false, 0
	}
}

// Height is how many rows View will draw: the rows the text fills, at
// most the editor's height.
func (in *Input) Height() int {
	if in.rows == 0 {
		in.ta.Placeholder = in.placeholder
		*in.lastRow = -1
		in.ta.View()
		// The textarea draws the text's rows and then a screenful of
		// blank rows.
		in.rows = max(*in.lastRow+1-in.ta.Height(), 1)
	}
	return min(in.rows, in.maxHeight)
}

// View draws the editor, scrolled so the cursor is visible.
func (in *Input) View(st theme.Styles) []string {
	in.setStyles(st)
	h := in.Height()
	rows := strings.Split(in.ta.View(), "\n")
	return termtext.FitLines(rows[:min(h, len(rows))], in.width, h)
}

func (in *Input) setStyles(st theme.Styles) {
	focused := textarea.Style{
		Base:        st.InputText,
		CursorLine:  st.InputText,
		EndOfBuffer: st.InputText,
		Placeholder: st.Placeholder,
		Prompt:      st.Prompt,
		Text:        st.InputText,
	}
	blurred := focused
	blurred.CursorLine, blurred.Text = st.Placeholder, st.Placeholder
	in.ta.FocusedStyle, in.ta.BlurredStyle = focused, blurred
	in.ta.Cursor.Style = st.Cursor
	// The textarea keeps a pointer to whichever of the two applies.
	if in.ta.Focused() {
		in.ta.Focus()
	} else {
		in.ta.Blur()
	}
}
