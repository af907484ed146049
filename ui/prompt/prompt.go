// Package prompt is what the next reply is asked with beyond the
// conversation: the template switches /think sets (enable_thinking and
// gpt-oss's reasoning_effort), and /prompt, which renders the next
// reply's exact prompt and its tokens into the help pane. It owns both
// commands; the root builds the request (Request) and shows the pane.
package prompt

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/command"
	"vkchat/ui/helppane"
	"vkchat/ui/termtext"
)

// Renderer is implemented by engines that can show the exact prompt a
// request renders to (the /prompt command); *engine.Session does.
type Renderer interface {
	RenderPrompt(req engine.Request) (engine.RenderedPrompt, error)
}

// Host is what the prompt's commands need of the chat.
type Host interface {
	command.Reporter
	Completion() bool        // completion mode: no template
	Request() engine.Request // the request the next reply is generated from
	Renderer() (Renderer, bool)
	Show(*helppane.Prompt) // put the rendered prompt in the help pane
}

// Thinking is the chat's thinking switches; whether reasoning blocks are
// folded is the transcript's.
type Thinking struct {
	Off    bool   // /think off: enable_thinking=false
	Effort string // /think low|medium|high: reasoning_effort (gpt-oss); "" unset
	h      Host
}

// New starts from the flags' switches.
func New(off bool, effort string, h Host) *Thinking { return &Thinking{Off: off, Effort: effort, h: h} }

// Commands are /think and /prompt.
func (t *Thinking) Commands() []command.Command {
	return []command.Command{
		{Name: "think", ArgHelp: "on|off|low|medium|high", Arg: command.TextRequired,
			Help: "enable_thinking for thinking models (Qwen3, SmolLM3, Gemma 4): off asks for the answer without reasoning; low, medium, high set gpt-oss's reasoning_effort",
			Run:  func(a command.Args) tea.Cmd { t.set(a.Text); return nil }},
		{Name: "prompt", ArgHelp: "[TEXT]", Arg: command.Text,
			Help: "show the exact prompt of the next reply and its tokens; TEXT stands for your next message",
			Run:  func(a command.Args) tea.Cmd { t.show(a.Text); return nil }},
	}
}

// set is /think on|off|low|medium|high: enable_thinking, and for
// templates that read it (gpt-oss's harmony) reasoning_effort, for the next
// replies. An effort turns thinking on; off leaves the effort as it was,
// since enable_thinking=false already asks for no reasoning.
func (t *Thinking) set(arg string) {
	if t.h.Completion() {
		t.h.Error("completion mode has no chat template to pass enable_thinking to")
		return
	}
	a := strings.ToLower(strings.TrimSpace(arg))
	switch a {
	case "on":
		t.Off = false
		t.h.Info("thinking on: enable_thinking=true from the next reply")
	case "off":
		t.Off = true
		t.h.Info("thinking off: enable_thinking=false from the next reply")
	default:
		if chat.CheckReasoningEffort(a) != nil || a == "" {
			t.h.Error(fmt.Sprintf("/think takes on, off, or an effort (%s), not %q", strings.Join(chat.ReasoningEfforts, ", "), arg))
			return
		}
		t.Off, t.Effort = false, a
		t.h.Info(fmt.Sprintf("thinking on, reasoning_effort=%s from the next reply (templates that read it: gpt-oss)", a))
	}
}

// show is /prompt [TEXT]: the prompt of the next reply and its tokens, in
// the help pane (esc closes it). The next reply answers a user turn; in a
// fresh chat or after a reply there is none yet, so TEXT (or a
// placeholder) stands for it, as chat.ForNextReply says.
func (t *Thinking) show(next string) {
	pr, ok := t.h.Renderer()
	if !ok {
		t.h.Error("this engine cannot show its prompt")
		return
	}
	req := t.h.Request()
	pane := &helppane.Prompt{}
	if !t.h.Completion() {
		req.Messages, pane.Placeholder = chat.ForNextReply(req.Messages, next)
	} else if next != "" {
		req.Messages = append(req.Messages, chat.Message{Role: chat.RoleUser, Content: next})
	}
	r, err := pr.RenderPrompt(req)
	if err != nil {
		pane.Err = termtext.Sanitize(err.Error())
		t.h.Error("the prompt could not be rendered (the pane says why)")
	}
	pane.R = r
	t.h.Show(pane)
}
