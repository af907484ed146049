package command

import (
	"errors"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func nop(Args) tea.Cmd { return nil }

// TestCheckFindsClashes: a name or alias two components both declare, and
// a command without a handler or help, are reported by name.
func TestCheckFindsClashes(t *testing.T) {
	r := New(
		[]Command{{Name: "save", Help: "save", Run: nop}, {Name: "new", Help: "new chat", Run: nop}},
		[]Command{{Name: "clear", Aliases: []string{"new"}, Help: "clear", Run: nop}, {Name: "bare"}},
	)
	err := r.Check()
	if err == nil {
		t.Fatal("no error for a clash")
	}
	for _, want := range []string{"/new is declared by /new and /clear", "/bare has no handler or no help"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if err := New([]Command{{Name: "save", Help: "save", Run: nop}}).Check(); err != nil {
		t.Errorf("a clean registry: %v", err)
	}
}

// TestParseRunsTheOwnersHandler: a parsed line runs the handler of the
// component that declared the name, with the argument in its shape.
func TestParseRunsTheOwnersHandler(t *testing.T) {
	var got []string
	r := New([]Command{{Name: "temp", Arg: Float, Lo: 0, Hi: 2, Help: "t", Example: "/temp 0.7",
		Run: func(a Args) tea.Cmd { got = append(got, "temp"); return nil }}},
		[]Command{{Name: "load", Aliases: []string{"open"}, Arg: TextRequired, Help: "l",
			Run: func(a Args) tea.Cmd { got = append(got, "load "+a.Text); return nil }}})
	for _, line := range []string{"/temp 1.5", "/OPEN  my chat "} {
		c, err := r.Parse(line)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		c.Run()
	}
	if strings.Join(got, ",") != "temp,load my chat" {
		t.Errorf("ran %q", got)
	}
	if _, err := r.Parse("/temp 3"); err == nil || !strings.Contains(err.Error(), "/temp: 3 is out of range (0 to 2)") {
		t.Errorf("/temp 3: %v", err)
	}
	if _, err := r.Parse("/temp x"); err == nil || !strings.Contains(err.Error(), "e.g. /temp 0.7") {
		t.Errorf("/temp x: %v", err)
	}
	if _, err := r.Parse("hello /temp 1"); !errors.Is(err, ErrNotCommand) {
		t.Errorf("a message: %v", err)
	}
}
