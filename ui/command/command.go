package command

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// Arg is the shape of a command's argument.
type Arg int

// The argument shapes.
const (
	None         Arg = iota
	Float            // one number in Lo..Hi
	Int              // one whole number in Lo..Hi
	Seed             // a uint64, or nothing (or "random") for a new one
	Text             // the rest of the line, possibly empty
	TextRequired     // the rest of the line, not empty
)

// Args is a parsed argument; only the field its shape uses is set.
type Args struct {
	Value      float32 // Float
	N          int     // Int
	Seed       uint64  // Seed N
	RandomSeed bool    // Seed without a number
	Text       string  // Text, TextRequired
}

// Command is one slash command, declared once by the component that
// handles it.
type Command struct {
	Name    string
	Aliases []string
	ArgHelp string // the argument as /help shows it: "VALUE", "[TEXT]"
	Arg     Arg
	Lo, Hi  float64 // inclusive range of a Float or Int argument
	Example string  // a line that parses, for the error of a bad number
	Help    string
	Run     func(Args) tea.Cmd
}

// Usage is "/name ARGS".
func (c *Command) Usage() string {
	if c.ArgHelp == "" {
		return "/" + c.Name
	}
	return "/" + c.Name + " " + c.ArgHelp
}

func (c *Command) example() string {
	if c.Example != "" {
		return c.Example
	}
	return c.Usage()
}

// KeySection is one heading of a key reference (F1, the README's table):
// a component lists the keys it answers to under its title.
type KeySection struct {
	Title string
	Keys  []key.Binding
}

// Registry is every slash command of the chat, in the order /help lists
// them.
type Registry struct {
	cmds []*Command
}

// New gathers the components' commands, in the order given.
func New(groups ...[]Command) *Registry {
	r := &Registry{}
	for _, g := range groups {
		for i := range g {
			c := g[i]
			r.cmds = append(r.cmds, &c)
		}
	}
	return r
}

// Check reports a name or alias declared twice, or a command without a
// handler or help: the registry's own consistency, which a test asserts.
func (r *Registry) Check() error {
	seen := map[string]string{}
	var errs []error
	for _, c := range r.cmds {
		if c.Run == nil || c.Help == "" {
			errs = append(errs, fmt.Errorf("/%s has no handler or no help", c.Name))
		}
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if n != strings.ToLower(n) {
				errs = append(errs, fmt.Errorf("/%s: name %q is not lower case", c.Name, n))
			}
			if other, dup := seen[n]; dup {
				errs = append(errs, fmt.Errorf("/%s is declared by /%s and /%s", n, other, c.Name))
			}
			seen[n] = c.Name
		}
	}
	return errors.Join(errs...)
}

// Commands lists every command, in the order /help shows them.
func (r *Registry) Commands() []*Command { return r.cmds }

// Lookup finds a command by name or alias, ignoring case.
func (r *Registry) Lookup(name string) (*Command, bool) {
	name = strings.ToLower(name)
	for _, c := range r.cmds {
		if c.Name == name {
			return c, true
		}
		for _, a := range c.Aliases {
			if a == name {
				return c, true
			}
		}
	}
	return nil, false
}

// Call is a parsed line: the command and its argument.
type Call struct {
	Cmd  *Command
	Args Args
}

// Run hands the argument to the command's handler.
func (c Call) Run() tea.Cmd { return c.Cmd.Run(c.Args) }

// ErrNotCommand is returned for input that is a message, not a command.
var ErrNotCommand = errors.New("not a command")

// Parse parses a line typed into the input. Lines that do not start with
// "/" (after leading blanks), and lines starting with "//" (an escaped
// slash), are messages: it returns ErrNotCommand for them. Every other
// failure is an error written for the person who typed the line.
func (r *Registry) Parse(line string) (Call, error) {
	s := strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return Call{}, ErrNotCommand
	}
	s = s[1:]
	name, rest := s, ""
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		name, rest = s[:i], strings.TrimSpace(s[i:])
	}
	if name == "" {
		return Call{}, errors.New("type a command after \"/\" (/help lists them)")
	}
	c, ok := r.Lookup(name)
	if !ok {
		return Call{}, fmt.Errorf("unknown command %s (/help lists them)", quoteArg("/"+name))
	}
	call := Call{Cmd: c}
	fields := strings.Fields(rest)
	switch c.Arg {
	case None:
		if rest != "" {
			return Call{}, fmt.Errorf("/%s takes no arguments", c.Name)
		}
	case Float, Int:
		if len(fields) != 1 {
			return Call{}, fmt.Errorf("/%s needs one number, e.g. %s", c.Name, c.example())
		}
		v, err := parseNumber(c, fields[0])
		if err != nil {
			return Call{}, err
		}
		if c.Arg == Int {
			call.Args.N = int(v)
		} else {
			call.Args.Value = float32(v)
		}
	case Seed:
		switch {
		case len(fields) == 0 || (len(fields) == 1 && strings.EqualFold(fields[0], "random")):
			call.Args.RandomSeed = true
		case len(fields) > 1:
			return Call{}, fmt.Errorf("/%s takes one number, or nothing for a new random seed", c.Name)
		default:
			n, err := strconv.ParseUint(fields[0], 0, 64)
			if err != nil {
				return Call{}, fmt.Errorf("/%s: %s is not a whole number from 0 to %d", c.Name, quoteArg(fields[0]), uint64(math.MaxUint64))
			}
			call.Args.Seed = n
		}
	case Text:
		call.Args.Text = rest
	case TextRequired:
		if rest == "" {
			return Call{}, fmt.Errorf("/%s needs a file, e.g. /%s chat.json", c.Name, c.Name)
		}
		call.Args.Text = rest
	}
	return call, nil
}

// quoteArg shows an argument as typed, control characters escaped.
func quoteArg(s string) string {
	const maxShown = 24
	if r := []rune(s); len(r) > maxShown {
		s = string(r[:maxShown]) + "…"
	}
	return strconv.QuoteToGraphic(s)
}

func parseNumber(c *Command, arg string) (float64, error) {
	rng := fmt.Sprintf("%s to %s", strconv.FormatFloat(c.Lo, 'g', -1, 64), strconv.FormatFloat(c.Hi, 'g', -1, 64))
	if c.Arg == Int {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/%s: %s is not a whole number (0 turns it off)", c.Name, quoteArg(arg))
		}
		if float64(n) < c.Lo || float64(n) > c.Hi {
			return 0, fmt.Errorf("/%s: %d is out of range (%s)", c.Name, n, rng)
		}
		return float64(n), nil
	}
	v, err := strconv.ParseFloat(arg, 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("/%s: %s is not a number, e.g. %s", c.Name, quoteArg(arg), c.example())
	}
	if v < c.Lo || v > c.Hi {
		return 0, fmt.Errorf("/%s: %s is out of range (%s)", c.Name, arg, rng)
	}
	return v, nil
}

// String formats c back into the line that parses to it.
func (c Call) String() string {
	if c.Cmd == nil {
		return ""
	}
	var arg string
	switch c.Cmd.Arg {
	case Float:
		arg = strconv.FormatFloat(float64(c.Args.Value), 'g', -1, 32)
	case Int:
		arg = strconv.Itoa(c.Args.N)
	case Seed:
		if !c.Args.RandomSeed {
			arg = strconv.FormatUint(c.Args.Seed, 10)
		}
	case Text, TextRequired:
		arg = c.Args.Text
	}
	if arg == "" {
		return "/" + c.Cmd.Name
	}
	return "/" + c.Cmd.Name + " " + arg
}

// Reporter is the status line under the transcript, where a command or a
// key says what it did.
type Reporter interface {
	Info(text string)
	Error(text string)
}
