package ui

import (
	"errors"
	"strings"
	"testing"

	"vkchat/ui/command"
)

// parsed is what a line parses to: the command's name and its argument.
type parsed struct {
	name string
	args command.Args
}

// testRegistry is the chat's registry, as every component declares it.
func testRegistry(t testing.TB) *command.Registry {
	return newModel(newFakeEngine(), Config{StateDir: t.TempDir()}, testRenderer()).cmds
}

// TestRegistryIsConsistent: no name or alias is declared twice, and
// every command has a handler and help.
func TestRegistryIsConsistent(t *testing.T) {
	if err := testRegistry(t).Check(); err != nil {
		t.Fatal(err)
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    parsed
		wantErr string // substring of the error; "" for success
	}{
		{in: "/temp 0.7", want: parsed{"temp", command.Args{Value: 0.7}}},
		{in: "  /temp   0", want: parsed{"temp", command.Args{Value: 0}}},
		{in: "/temperature 1.5", want: parsed{"temp", command.Args{Value: 1.5}}},
		{in: "/TEMP 1", want: parsed{"temp", command.Args{Value: 1}}},
		{in: "/temp", wantErr: "/temp needs one number, e.g. /temp 0.7"},
		{in: "/temp hot", wantErr: `/temp: "hot" is not a number`},
		{in: "/temp 7", wantErr: "/temp: 7 is out of range (0 to 5)"},
		{in: "/temp -0.1", wantErr: "out of range"},
		{in: "/temp NaN", wantErr: "not a number"},
		{in: "/temp inf", wantErr: "not a number"},
		{in: "/temp 0.5 0.6", wantErr: "needs one number"},
		{in: "/top-p 0.9", want: parsed{"top-p", command.Args{Value: 0.9}}},
		{in: "/top-p 1", want: parsed{"top-p", command.Args{Value: 1}}},
		{in: "/top-p 0", wantErr: "/top-p: 0 is out of range (0.05 to 1)"},
		{in: "/topp 0.5", want: parsed{"top-p", command.Args{Value: 0.5}}},
		{in: "/top-k 40", want: parsed{"top-k", command.Args{N: 40}}},
		{in: "/top-k 0", want: parsed{"top-k", command.Args{N: 0}}},
		{in: "/top-k 4.5", wantErr: `/top-k: "4.5" is not a whole number`},
		{in: "/top-k -1", wantErr: "out of range"},
		{in: "/top-k 99999999999999999999", wantErr: "not a whole number"},
		{in: "/min-p 0.05", want: parsed{"min-p", command.Args{Value: 0.05}}},
		{in: "/min-p 2", wantErr: "/min-p: 2 is out of range (0 to 1)"},
		{in: "/repeat 1.1", want: parsed{"repeat", command.Args{Value: 1.1}}},
		{in: "/repeat 0", wantErr: "/repeat: 0 is out of range (0.5 to 3)"},
		{in: "/seed 42", want: parsed{"seed", command.Args{Seed: 42}}},
		{in: "/seed 0x10", want: parsed{"seed", command.Args{Seed: 16}}},
		{in: "/seed", want: parsed{"seed", command.Args{RandomSeed: true}}},
		{in: "/seed random", want: parsed{"seed", command.Args{RandomSeed: true}}},
		{in: "/seed -3", wantErr: `/seed: "-3" is not a whole number`},
		{in: "/seed 1 2", wantErr: "/seed takes one number"},
		{in: "/system You are terse.", want: parsed{"system", command.Args{Text: "You are terse."}}},
		{in: "/system   two\nlines  ", want: parsed{"system", command.Args{Text: "two\nlines"}}},
		{in: "/system", want: parsed{"system", command.Args{}}},
		{in: "/clear", want: parsed{"clear", command.Args{}}},
		{in: "/clear now", wantErr: "/clear takes no arguments"},
		{in: "/new", want: parsed{"clear", command.Args{}}},
		{in: "/save", want: parsed{"save", command.Args{}}},
		{in: "/save ~/chat one.json", want: parsed{"save", command.Args{Text: "~/chat one.json"}}},
		{in: "/load chat.json", want: parsed{"load", command.Args{Text: "chat.json"}}},
		{in: "/load", wantErr: "/load needs a file, e.g. /load chat.json"},
		{in: "/help", want: parsed{"help", command.Args{}}},
		{in: "/?", want: parsed{"help", command.Args{}}},
		{in: "/quit", want: parsed{"quit", command.Args{}}},
		{in: "/", wantErr: `type a command after "/"`},
		{in: "/frobnicate 3", wantErr: `unknown command "/frobnicate" (/help lists them)`},
		{in: "/\x1b]52;c;x\x07", wantErr: `unknown command "/\x1b]52;c;x\a"`},
	}
	reg := testRegistry(t)
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			call, err := reg.Parse(tt.in)
			var got parsed
			if call.Cmd != nil {
				got = parsed{call.Cmd.Name, call.Args}
			}
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("reg.Parse(%q) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				if errors.Is(err, command.ErrNotCommand) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("reg.Parse(%q) error %q, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("reg.Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("reg.Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseCommandMessages(t *testing.T) {
	reg := testRegistry(t)
	for _, in := range []string{"", "hello", "a /temp 1", "//temp 1 is a path", "  //x", "\n"} {
		if _, err := reg.Parse(in); !errors.Is(err, command.ErrNotCommand) {
			t.Errorf("reg.Parse(%q) = %v, want ErrNotCommand", in, err)
		}
	}
}

func TestUnknownCommandErrorHasNoControls(t *testing.T) {
	reg := testRegistry(t)
	_, err := reg.Parse("/\x1b]52;c;aGk=\x07")
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Fatalf("error %q carries control bytes", err)
	}
}

// FuzzParseCommand: any line parses or fails without panicking; what
// parses is in range and survives a round trip through String.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"/temp 0.7", "/top-p 0.9", "/top-k 40", "/min-p 0.05", "/repeat 1.1", "/seed 42", "/seed",
		"/system be brief", "/clear", "/save a.json", "/load a.json", "/help", "/quit", "/", "//x",
		"/temp 1e-3", "/top-k 0x10", "/seed 18446744073709551615", "/temp \u00a01", "/TOP-P 1", "hello",
	} {
		f.Add(s)
	}
	reg := testRegistry(f)
	f.Fuzz(func(t *testing.T, line string) {
		c, err := reg.Parse(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			for _, r := range err.Error() {
				if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
					t.Fatalf("error for %q holds control %U: %q", line, r, err)
				}
			}
			return
		}
		spec := c.Cmd
		switch spec.Arg {
		case command.Float:
			if float64(c.Args.Value) < spec.Lo-1e-6 || float64(c.Args.Value) > spec.Hi+1e-6 || c.Args.Value != c.Args.Value {
				t.Fatalf("%q: value %v outside [%v, %v]", line, c.Args.Value, spec.Lo, spec.Hi)
			}
		case command.Int:
			if c.Args.N < 0 {
				t.Fatalf("%q: negative top-k %d", line, c.Args.N)
			}
		case command.TextRequired:
			if c.Args.Text == "" {
				t.Fatalf("%q: empty required text", line)
			}
		}
		again, err := reg.Parse(c.String())
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", line, c.String(), err)
		}
		if again.Cmd != c.Cmd || again.Args != c.Args {
			t.Fatalf("%q → %+v → %q → %+v", line, c, c.String(), again)
		}
	})
}
