package input

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"vkchat/runtime/sample"
)

// Limits for the sampler settings the UI lets a user choose (sample's, which
// files are checked against too); the slash commands reject values outside
// them and the sampler keys stop at them.
const (
	MaxTemperature = sample.MaxTemperature
	MinTopP        = sample.MinTopP
	MinRepeat      = sample.MinRepeat
	MaxRepeat      = sample.MaxRepeat
	MaxPenalty     = sample.MaxPenalty
)

// CommandKind names a slash command.
type CommandKind int

// The slash commands.
const (
	CmdTemp CommandKind = iota + 1
	CmdTopP
	CmdTopK
	CmdMinP
	CmdRepeat
	CmdSeed
	CmdSystem
	CmdClear
	CmdSave
	CmdLoad
	CmdExport
	CmdHelp
	CmdQuit
	CmdBackend
	CmdThink
	CmdPrompt
	CmdMaxTokens
	CmdPresence
	CmdFrequency
	CmdStop
	CmdChats
	CmdCopy
	CmdEdit
	CmdModel
)

// Command is a parsed slash command. Only the fields its Kind uses are set.
type Command struct {
	Kind       CommandKind
	Value      float32 // /temp, /top-p, /min-p, /repeat
	N          int     // /top-k
	Seed       uint64  // /seed N
	RandomSeed bool    // /seed without a number
	Text       string  // /system text, /save and /load file, /backend name
}

// ErrNotCommand is returned for input that is a message, not a command.
var ErrNotCommand = errors.New("not a command")

type argKind int

const (
	argNone argKind = iota
	argFloat
	argInt
	argSeed
	argTextOptional
	argTextRequired
)

type commandSpec struct {
	kind    CommandKind
	name    string
	aliases []string
	args    string
	arg     argKind
	lo, hi  float64 // inclusive range of a numeric argument
	help    string
}

// commands is the one table the parser, the error messages and /help use.
var commands = []commandSpec{
	{kind: CmdTemp, name: "temp", aliases: []string{"temperature"}, args: "VALUE", arg: argFloat, lo: 0, hi: MaxTemperature,
		help: "sampling temperature; 0 is greedy"},
	{kind: CmdTopP, name: "top-p", aliases: []string{"topp", "top_p"}, args: "VALUE", arg: argFloat, lo: MinTopP, hi: 1,
		help: "keep the likeliest tokens up to this total probability; 1 is off"},
	{kind: CmdTopK, name: "top-k", aliases: []string{"topk", "top_k"}, args: "N", arg: argInt, lo: 0, hi: math.MaxInt32,
		help: "keep the N likeliest tokens; 0 is off"},
	{kind: CmdMinP, name: "min-p", aliases: []string{"minp", "min_p"}, args: "VALUE", arg: argFloat, lo: 0, hi: 1,
		help: "drop tokens less likely than VALUE × the likeliest; 0 is off"},
	{kind: CmdRepeat, name: "repeat", aliases: []string{"repeat-penalty"}, args: "VALUE", arg: argFloat, lo: MinRepeat, hi: MaxRepeat,
		help: "penalty for recently used tokens; 1 is off"},
	{kind: CmdPresence, name: "presence", aliases: []string{"presence-penalty", "presence_penalty"}, args: "VALUE", arg: argFloat, lo: -MaxPenalty, hi: MaxPenalty,
		help: "subtract VALUE once from every token already in the last 64; 0 is off"},
	{kind: CmdFrequency, name: "frequency", aliases: []string{"frequency-penalty", "frequency_penalty"}, args: "VALUE", arg: argFloat, lo: -MaxPenalty, hi: MaxPenalty,
		help: "subtract VALUE per use from tokens in the last 64; 0 is off"},
	{kind: CmdMaxTokens, name: "max-tokens", aliases: []string{"max_tokens", "n"}, args: "N", arg: argInt, lo: 0, hi: math.MaxInt32,
		help: "end each reply after N tokens; 0: until the model stops"},
	{kind: CmdStop, name: "stop", args: "[TEXT]", arg: argTextOptional,
		help: "end replies where the answer writes TEXT (\\n for a line break; add more one at a time); without TEXT clear them"},
	{kind: CmdSeed, name: "seed", args: "[N]", arg: argSeed,
		help: "fix the sampler seed; without N draw a new one"},
	{kind: CmdSystem, name: "system", args: "[TEXT]", arg: argTextOptional,
		help: "set the system prompt; without TEXT clear it"},
	{kind: CmdClear, name: "clear", aliases: []string{"new"}, help: "start a new chat (the old one stays saved)"},
	{kind: CmdSave, name: "save", args: "[NAME]", arg: argTextOptional,
		help: "save the conversation now, or a copy to NAME: Markdown if it ends in .md, else JSON; a bare name goes with the saved chats, a path (./x, ~/x) where it says"},
	{kind: CmdLoad, name: "load", args: "NAME", arg: argTextRequired,
		help: "resume a saved conversation: a name /chats lists (the same rule as /save), or a path"},
	{kind: CmdChats, name: "chats", aliases: []string{"history"}, help: "list the saved conversations, newest first, with the /load NAME that opens each"},
	{kind: CmdExport, name: "export", args: "FILE", arg: argTextRequired,
		help: "write the inspected (else the latest) reply's tokens, log-probabilities and top alternatives as JSON Lines; vkchat replay FILE re-runs it"},
	{kind: CmdModel, name: "model", args: "[FILE]", arg: argTextOptional,
		help: "switch to another model, keeping the conversation (its template renders it from the next reply); without FILE pick from the stored models"},
	{kind: CmdEdit, name: "edit", args: "[N]", arg: argTextOptional,
		help: "edit your last message (or your Nth) and send it again as a new branch; the old one stays (alt+, / alt+.); esc cancels"},
	{kind: CmdCopy, name: "copy", args: "[code [N]|all]", arg: argTextOptional,
		help: "copy the last reply; code: its last code block (code N: the Nth); all: the whole chat as Markdown (OSC 52, and the system clipboard)"},
	{kind: CmdHelp, name: "help", aliases: []string{"?"}, help: "show keys and commands"},
	{kind: CmdQuit, name: "quit", aliases: []string{"exit"}, help: "save and quit"},
	{kind: CmdBackend, name: "backend", args: "NAME", arg: argTextRequired,
		help: "continue on another compute backend (cpu or vulkan), e.g. after a GPU fault"},
	{kind: CmdThink, name: "think", args: "on|off|low|medium|high", arg: argTextRequired,
		help: "enable_thinking for thinking models (Qwen3, SmolLM3, Gemma 4): off asks for the answer without reasoning; low, medium, high set gpt-oss's reasoning_effort"},
	{kind: CmdPrompt, name: "prompt", args: "[TEXT]", arg: argTextOptional,
		help: "show the exact prompt of the next reply and its tokens; TEXT stands for your next message"},
}

func lookupCommand(name string) (commandSpec, bool) {
	name = strings.ToLower(name)
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
		for _, a := range c.aliases {
			if a == name {
				return c, true
			}
		}
	}
	return commandSpec{}, false
}

func specOf(k CommandKind) commandSpec {
	for _, c := range commands {
		if c.kind == k {
			return c
		}
	}
	return commandSpec{}
}

// CommandHelp is one line of the help screen's command list.
type CommandHelp struct {
	Usage string // "/name ARGS"
	Help  string
}

// Commands lists every slash command for the help screen, in the order
// of the one table the parser also reads.
func Commands() []CommandHelp {
	out := make([]CommandHelp, len(commands))
	for i, c := range commands {
		out[i] = CommandHelp{Usage: c.usage(), Help: c.help}
	}
	return out
}

// usage is "/name ARGS".
func (c commandSpec) usage() string {
	if c.args == "" {
		return "/" + c.name
	}
	return "/" + c.name + " " + c.args
}

// ParseCommand parses a line typed into the input. Lines that do not start
// with "/" (after leading blanks), and lines starting with "//" (an escaped
// slash), are messages: it returns ErrNotCommand for them. Every other
// failure is an error written for the person who typed the line.
func ParseCommand(line string) (Command, error) {
	s := strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return Command{}, ErrNotCommand
	}
	s = s[1:]
	name, rest := s, ""
	if i := strings.IndexFunc(s, unicode.IsSpace); i >= 0 {
		name, rest = s[:i], strings.TrimSpace(s[i:])
	}
	if name == "" {
		return Command{}, errors.New("type a command after \"/\" (/help lists them)")
	}
	spec, ok := lookupCommand(name)
	if !ok {
		return Command{}, fmt.Errorf("unknown command %s (/help lists them)", quoteArg("/"+name))
	}
	cmd := Command{Kind: spec.kind}
	fields := strings.Fields(rest)
	switch spec.arg {
	case argNone:
		if rest != "" {
			return Command{}, fmt.Errorf("/%s takes no arguments", spec.name)
		}
	case argFloat, argInt:
		if len(fields) != 1 {
			return Command{}, fmt.Errorf("/%s needs one number, e.g. %s", spec.name, example(spec))
		}
		v, err := parseNumber(spec, fields[0])
		if err != nil {
			return Command{}, err
		}
		if spec.arg == argInt {
			cmd.N = int(v)
		} else {
			cmd.Value = float32(v)
		}
	case argSeed:
		switch {
		case len(fields) == 0 || (len(fields) == 1 && strings.EqualFold(fields[0], "random")):
			cmd.RandomSeed = true
		case len(fields) > 1:
			return Command{}, errors.New("/seed takes one number, or nothing for a new random seed")
		default:
			n, err := strconv.ParseUint(fields[0], 0, 64)
			if err != nil {
				return Command{}, fmt.Errorf("/seed: %s is not a whole number from 0 to %d", quoteArg(fields[0]), uint64(math.MaxUint64))
			}
			cmd.Seed = n
		}
	case argTextOptional:
		cmd.Text = rest
	case argTextRequired:
		if rest == "" {
			return Command{}, fmt.Errorf("/%s needs a file, e.g. /%s chat.json", spec.name, spec.name)
		}
		cmd.Text = rest
	}
	return cmd, nil
}

func example(spec commandSpec) string {
	switch spec.kind {
	case CmdTemp:
		return "/temp 0.7"
	case CmdTopP:
		return "/top-p 0.9"
	case CmdTopK:
		return "/top-k 40"
	case CmdMinP:
		return "/min-p 0.05"
	case CmdRepeat:
		return "/repeat 1.1"
	case CmdPresence:
		return "/presence 0.5"
	case CmdFrequency:
		return "/frequency 0.5"
	case CmdMaxTokens:
		return "/max-tokens 256"
	}
	return spec.usage()
}

// quoteArg shows an argument as typed, control characters escaped.
func quoteArg(s string) string {
	const maxShown = 24
	if r := []rune(s); len(r) > maxShown {
		s = string(r[:maxShown]) + "…"
	}
	return strconv.QuoteToGraphic(s)
}

func parseNumber(spec commandSpec, arg string) (float64, error) {
	rng := fmt.Sprintf("%s to %s", strconv.FormatFloat(spec.lo, 'g', -1, 64), strconv.FormatFloat(spec.hi, 'g', -1, 64))
	if spec.arg == argInt {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/%s: %s is not a whole number (0 turns it off)", spec.name, quoteArg(arg))
		}
		if float64(n) < spec.lo || float64(n) > spec.hi {
			return 0, fmt.Errorf("/%s: %d is out of range (%s)", spec.name, n, rng)
		}
		return float64(n), nil
	}
	v, err := strconv.ParseFloat(arg, 32)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("/%s: %s is not a number, e.g. %s", spec.name, quoteArg(arg), example(spec))
	}
	if v < spec.lo || v > spec.hi {
		return 0, fmt.Errorf("/%s: %s is out of range (%s)", spec.name, arg, rng)
	}
	return v, nil
}

// String formats c back into the line that parses to it.
func (c Command) String() string {
	spec := specOf(c.Kind)
	if spec.name == "" {
		return ""
	}
	var arg string
	switch spec.arg {
	case argFloat:
		arg = strconv.FormatFloat(float64(c.Value), 'g', -1, 32)
	case argInt:
		arg = strconv.Itoa(c.N)
	case argSeed:
		if !c.RandomSeed {
			arg = strconv.FormatUint(c.Seed, 10)
		}
	case argTextOptional, argTextRequired:
		arg = c.Text
	}
	if arg == "" {
		return "/" + spec.name
	}
	return "/" + spec.name + " " + arg
}
