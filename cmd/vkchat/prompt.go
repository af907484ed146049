package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

func init() {
	register(command{name: "prompt", summary: "print the exact prompt a conversation renders to, and its tokens", run: runPrompt})
}

// maxMessagesBytes bounds what --messages reads.
const maxMessagesBytes = 64 << 20

func runPrompt(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("prompt", "--model FILE [--messages conv.json] [--system T] [--user T] [--think=false] [--json]", stderr)
	model := fs.String("model", "", "GGUF model (or vocabulary) file, or demo; the weights are not loaded")
	messages := fs.String("messages", "", "conversation JSON: a list of {role, content}, or a file vkchat saved")
	system := fs.String("system", "", "system prompt (replaces the conversation's own)")
	user := fs.String("user", "", "a user message appended to the conversation")
	think := fs.Bool("think", true, "enable_thinking as the template sees it (--think=false: Qwen3 pre-fills an empty block)")
	effort := fs.String("reasoning-effort", "", "reasoning_effort as the template sees it (gpt-oss: low, medium or high); unset by default")
	template := fs.String("template", "", "chat template: '' for the model's own, a built-in name, or none")
	asJSON := fs.Bool("json", false, "print the rendered prompt as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" {
		fs.Usage()
		return fmt.Errorf("no model: pass --model FILE")
	}
	if err := chat.CheckReasoningEffort(*effort); err != nil {
		return fmt.Errorf("--reasoning-effort: %w", err)
	}
	path, err := modelPath(*model)
	if err != nil {
		return err
	}
	var msgs []chat.Message
	if *messages != "" {
		var err error
		if msgs, err = readMessages(*messages); err != nil {
			return err
		}
	}
	if *system != "" {
		if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
			msgs = msgs[1:]
		}
		msgs = append([]chat.Message{{Role: chat.RoleSystem, Content: *system}}, msgs...)
	}
	p, err := engine.OpenPrompter(path, *template)
	if err != nil {
		return err
	}
	defer p.Close()
	placeholder := false
	switch {
	case p.Completion():
		if *user != "" {
			msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: *user})
		}
		if len(msgs) == 0 {
			return fmt.Errorf("nothing to render: pass --messages FILE or --user TEXT")
		}
	default:
		// The next reply answers a user turn, as in the chat's /prompt:
		// a conversation without one gets --user, else a placeholder.
		msgs, placeholder = chat.ForNextReply(msgs, *user)
		placeholder = placeholder && *user == ""
	}
	r, err := p.Render(engine.Request{Messages: msgs, DisableThinking: !*think, ReasoningEffort: *effort})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if r.TemplateNote != "" {
		fmt.Fprintln(stderr, "note: "+termtext.Visible(r.TemplateNote))
	}
	if placeholder {
		fmt.Fprintf(stderr, "note: the conversation does not end with a user turn; %q stands for the next message (--user TEXT sets it)\n", chat.NextPlaceholder)
	}
	writePrompt(stdout, r, *think, *effort)
	return nil
}

// readMessages reads a conversation: a JSON list of messages, or an object
// with a "messages" list (the files vkchat saves conversations in).
func readMessages(path string) ([]chat.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMessagesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > maxMessagesBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a conversation", path, maxMessagesBytes>>20)
	}
	var msgs []chat.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		var saved struct {
			Messages *[]chat.Message `json:"messages"`
		}
		if err2 := json.Unmarshal(b, &saved); err2 != nil || saved.Messages == nil {
			return nil, fmt.Errorf("%s: want a JSON list of {\"role\", \"content\"} or an object with \"messages\": %w", path, err)
		}
		msgs = *saved.Messages
	}
	for i, m := range msgs {
		if m.Role == "" {
			return nil, fmt.Errorf("%s: message %d: field \"role\" is missing or empty", path, i)
		}
	}
	if len(msgs) == 0 {
		return nil, errors.New(path + ": the conversation has no messages")
	}
	return msgs, nil
}

// writePrompt prints the prompt text, then one line per token: control
// and user-defined tokens (template markup) in [brackets], text tokens as
// quoted strings. The text is sanitized as the chat's /prompt shows it: a
// shared conversation file must not be able to set the window title, write
// the clipboard (OSC 52) or clear the screen of whoever prints it. --json
// keeps the exact bytes.
func writePrompt(w io.Writer, r engine.RenderedPrompt, think bool, effort string) {
	switch {
	case r.Template == "":
		fmt.Fprintln(w, "template: none (completion mode: the messages are joined as plain text)")
	case r.FoldsSystem:
		fmt.Fprintf(w, "template: %s (it refuses or drops the system role: the system prompt is folded into the first user turn)\n", r.Template)
	default:
		fmt.Fprintf(w, "template: %s\n", r.Template)
	}
	fmt.Fprintf(w, "enable_thinking: %v", think)
	if r.OpensThinking {
		fmt.Fprint(w, " (the prompt opens a <think> block: the reply starts with reasoning)")
	}
	if effort != "" {
		fmt.Fprintf(w, "\nreasoning_effort: %s", effort)
	}
	fmt.Fprintf(w, "\n%d bytes, %d tokens\n", len(r.Text), len(r.Tokens))
	fmt.Fprintln(w, "--- prompt ---")
	text := termtext.Sanitize(r.Text)
	fmt.Fprint(w, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "--- tokens (special in [brackets]) ---")
	for i, t := range r.Tokens {
		shown := fmt.Sprintf("%q", t.Piece)
		if t.Special {
			// A model file names its own control tokens; Visible, as
			// the chat's /prompt shows them.
			shown = "[" + termtext.Visible(t.Text) + "]"
		}
		fmt.Fprintf(w, "%5d %8d  %s\n", i, t.ID, shown)
	}
}
