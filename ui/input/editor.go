package input

import (
	"errors"
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
//
// go.mod replaces bubbles with the patched copy in third_party (see its
// NOTE-UPSTREAM.md): the editor relies on its fixes for CRLF line endings,
// the scroll offset as the text grows or shrinks, the line limit being reported
// and Alt chords typing nothing (TestPatchedTextareaInUse).
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

	history []string
	histPos int    // index into history; len(history) is the unsent line
	draft   string // the unsent line, kept while browsing the history
	err     error  // a refused paste, for the status line
}

const inputPrompt = "> "

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

// New returns a focused, empty editor.
func New() Input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	// The layout decides the height; the default MaxHeight (99) would also
	// stop Enter-typed lines there. The textarea's own line limit (10,000)
	// still holds, and it says when a paste is cut short.
	ta.MaxHeight = 0
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
	in.ta.SetValue(Clean(s))
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

// SetPlaceholder sets what the empty editor shows.
func (in *Input) SetPlaceholder(s string) {
	in.placeholder = s
	in.rows = 0
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

// Clean turns pasted line endings into '\n' and tabs into spaces, and
// drops escape sequences and other controls (a paste from a terminal can
// carry colour codes): what the user sends should look as typed. Line
// endings come first because termtext.Sanitize drops '\r', and a
// terminal's bracketed paste may end each line with a lone one.
func Clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = termtext.Sanitize(s)
	return strings.ReplaceAll(s, "\t", strings.Repeat(" ", termtext.TabWidth))
}

// InsertNewline breaks the line at the cursor.
func (in *Input) InsertNewline() { in.insert("\n") }

func (in *Input) insert(s string) {
	s = Clean(s)
	if n := len(in.Value()) + len(s); n > maxInputBytes {
		in.err = fmt.Errorf("paste refused: the message would be %d KiB, and the input takes at most %d KiB", (n+1023)>>10, maxInputBytes>>10)
		return
	}
	in.ta.InsertString(s)
	in.changed()
}

// Update applies a key the chat left to the editor: text and editing keys
// go to the textarea (which types nothing for a key or Alt chord it does
// not bind), a bracketed paste is cleaned and size-checked first, and ↑/↓
// on the first/last row walk the history. The command, if any, reads the
// clipboard (Ctrl+V).
func (in *Input) Update(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.Paste:
		in.insert(string(msg.Runes))
		return nil
	case key.Matches(msg, in.ta.KeyMap.Paste):
		return readClipboard
	case msg.Type == tea.KeyUp && in.onFirstRow():
		in.browse(-1)
		return nil
	case msg.Type == tea.KeyDown && in.onLastRow():
		in.browse(+1)
		return nil
	case msg.Type == tea.KeySpace && len(msg.Runes) == 0:
		// bubbletea's reader sends the space as the key's rune; a
		// message built by hand may not, and the textarea types runes.
		msg.Runes = []rune{' '}
	}
	return in.apply(msg)
}

// Receive passes the editor the messages its commands produce (a failed
// clipboard read after Ctrl+V) and any the chat has no use for.
func (in *Input) Receive(msg tea.Msg) tea.Cmd {
	if e, ok := msg.(ClipboardErrMsg); ok {
		in.err = fmt.Errorf("could not paste from the clipboard: %w", e.err)
		return nil
	}
	return in.apply(msg)
}

// ClipboardErrMsg is a failed clipboard read (Ctrl+V); Receive turns it
// into the editor's error.
type ClipboardErrMsg struct{ err error }

// readClipboard reads the system clipboard for Ctrl+V and hands it back
// as a bracketed paste, so it is cleaned and size-checked like one (the
// textarea's own paste drops only the ESC of an escape sequence and keeps
// the rest of it as text).
func readClipboard() tea.Msg {
	s, err := clipboard.ReadAll()
	if err != nil {
		return ClipboardErrMsg{err}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s), Paste: true}
}

func (in *Input) apply(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	in.changed()
	return cmd
}

// changed notes that the text or its size changed, and takes over an edit
// the textarea cut short (a paste past its 10,000-line limit keeps the
// lines that fit) for the status line.
func (in *Input) changed() {
	in.rows = 0
	if err := in.ta.Err; err != nil {
		in.ta.Err = nil
		if errors.Is(err, textarea.ErrLineLimit) {
			err = fmt.Errorf("the message was cut short: %w", err)
		}
		in.err = err
	}
	if in.ta.Focused() {
		// SetValue, InsertString and SetWidth move the cursor or change
		// the rows without scrolling; an Update with no message puts the
		// view on the cursor, within the text.
		in.ta, _ = in.ta.Update(nil)
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

// EditingKeys are the editor's keys for the key reference (F1, README):
// the same bindings the editor uses, with help text.
func EditingKeys() []key.Binding {
	k := inputKeys()
	help := func(b key.Binding, keys, desc string) key.Binding {
		b.SetHelp(keys, desc)
		return b
	}
	return []key.Binding{
		help(k.Paste, "ctrl+v", "paste (a terminal paste works too)"),
		help(k.CharacterBackward, "←/→", "move by character"),
		help(k.WordBackward, "alt+←/→", "move by word (also ctrl+←/→)"),
		help(k.LineStart, "home/end", "line start/end (also ctrl+a/e)"),
		help(k.InputBegin, "ctrl+home/end", "start/end of the text"),
		help(k.DeleteWordBackward, "alt+backspace", "delete the word before (also ctrl+w)"),
		help(k.DeleteWordForward, "alt+d", "delete the word after"),
		help(k.DeleteAfterCursor, "ctrl+k", "delete to the line's end"),
		help(k.DeleteBeforeCursor, "ctrl+u", "delete to the line's start"),
		help(k.UppercaseWordForward, "alt+u/l/c", "upper-, lower-case, capitalize a word"),
		help(k.TransposeCharacterBackward, "ctrl+t", "swap two characters"),
	}
}
