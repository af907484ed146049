package input

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    Command
		wantErr string // substring of the error; "" for success
	}{
		{in: "/temp 0.7", want: Command{Kind: CmdTemp, Value: 0.7}},
		{in: "  /temp   0", want: Command{Kind: CmdTemp, Value: 0}},
		{in: "/temperature 1.5", want: Command{Kind: CmdTemp, Value: 1.5}},
		{in: "/TEMP 1", want: Command{Kind: CmdTemp, Value: 1}},
		{in: "/temp", wantErr: "/temp needs one number, e.g. /temp 0.7"},
		{in: "/temp hot", wantErr: `/temp: "hot" is not a number`},
		{in: "/temp 7", wantErr: "/temp: 7 is out of range (0 to 5)"},
		{in: "/temp -0.1", wantErr: "out of range"},
		{in: "/temp NaN", wantErr: "not a number"},
		{in: "/temp inf", wantErr: "not a number"},
		{in: "/temp 0.5 0.6", wantErr: "needs one number"},
		{in: "/top-p 0.9", want: Command{Kind: CmdTopP, Value: 0.9}},
		{in: "/top-p 1", want: Command{Kind: CmdTopP, Value: 1}},
		{in: "/top-p 0", wantErr: "/top-p: 0 is out of range (0.05 to 1)"},
		{in: "/topp 0.5", want: Command{Kind: CmdTopP, Value: 0.5}},
		{in: "/top-k 40", want: Command{Kind: CmdTopK, N: 40}},
		{in: "/top-k 0", want: Command{Kind: CmdTopK, N: 0}},
		{in: "/top-k 4.5", wantErr: `/top-k: "4.5" is not a whole number`},
		{in: "/top-k -1", wantErr: "out of range"},
		{in: "/top-k 99999999999999999999", wantErr: "not a whole number"},
		{in: "/min-p 0.05", want: Command{Kind: CmdMinP, Value: 0.05}},
		{in: "/min-p 2", wantErr: "/min-p: 2 is out of range (0 to 1)"},
		{in: "/repeat 1.1", want: Command{Kind: CmdRepeat, Value: 1.1}},
		{in: "/repeat 0", wantErr: "/repeat: 0 is out of range (0.5 to 3)"},
		{in: "/seed 42", want: Command{Kind: CmdSeed, Seed: 42}},
		{in: "/seed 0x10", want: Command{Kind: CmdSeed, Seed: 16}},
		{in: "/seed", want: Command{Kind: CmdSeed, RandomSeed: true}},
		{in: "/seed random", want: Command{Kind: CmdSeed, RandomSeed: true}},
		{in: "/seed -3", wantErr: `/seed: "-3" is not a whole number`},
		{in: "/seed 1 2", wantErr: "/seed takes one number"},
		{in: "/system You are terse.", want: Command{Kind: CmdSystem, Text: "You are terse."}},
		{in: "/system   two\nlines  ", want: Command{Kind: CmdSystem, Text: "two\nlines"}},
		{in: "/system", want: Command{Kind: CmdSystem}},
		{in: "/clear", want: Command{Kind: CmdClear}},
		{in: "/clear now", wantErr: "/clear takes no arguments"},
		{in: "/new", want: Command{Kind: CmdClear}},
		{in: "/save", want: Command{Kind: CmdSave}},
		{in: "/save ~/chat one.json", want: Command{Kind: CmdSave, Text: "~/chat one.json"}},
		{in: "/load chat.json", want: Command{Kind: CmdLoad, Text: "chat.json"}},
		{in: "/load", wantErr: "/load needs a file, e.g. /load chat.json"},
		{in: "/help", want: Command{Kind: CmdHelp}},
		{in: "/?", want: Command{Kind: CmdHelp}},
		{in: "/quit", want: Command{Kind: CmdQuit}},
		{in: "/", wantErr: `type a command after "/"`},
		{in: "/frobnicate 3", wantErr: `unknown command "/frobnicate" (/help lists them)`},
		{in: "/\x1b]52;c;x\x07", wantErr: `unknown command "/\x1b]52;c;x\a"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCommand(tt.in)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseCommand(%q) = %+v, want error %q", tt.in, got, tt.wantErr)
				}
				if errors.Is(err, ErrNotCommand) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseCommand(%q) error %q, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseCommand(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("ParseCommand(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseCommandMessages(t *testing.T) {
	for _, in := range []string{"", "hello", "a /temp 1", "//temp 1 is a path", "  //x", "\n"} {
		if _, err := ParseCommand(in); !errors.Is(err, ErrNotCommand) {
			t.Errorf("ParseCommand(%q) = %v, want ErrNotCommand", in, err)
		}
	}
}

func TestUnknownCommandErrorHasNoControls(t *testing.T) {
	_, err := ParseCommand("/\x1b]52;c;aGk=\x07")
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
	f.Fuzz(func(t *testing.T, line string) {
		c, err := ParseCommand(line)
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
		spec := specOf(c.Kind)
		if spec.name == "" {
			t.Fatalf("%q parsed to unknown kind %d", line, c.Kind)
		}
		switch spec.arg {
		case argFloat:
			if float64(c.Value) < spec.lo-1e-6 || float64(c.Value) > spec.hi+1e-6 || c.Value != c.Value {
				t.Fatalf("%q: value %v outside [%v, %v]", line, c.Value, spec.lo, spec.hi)
			}
		case argInt:
			if c.N < 0 {
				t.Fatalf("%q: negative top-k %d", line, c.N)
			}
		case argTextRequired:
			if c.Text == "" {
				t.Fatalf("%q: empty required text", line)
			}
		}
		again, err := ParseCommand(c.String())
		if err != nil {
			t.Fatalf("%q → %q does not parse: %v", line, c.String(), err)
		}
		if again != c {
			t.Fatalf("%q → %+v → %q → %+v", line, c, c.String(), again)
		}
	})
}
