package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Errors callers may test for with errors.Is or errors.As.
var (
	ErrUnknownTemplate = errors.New("chat: unknown built-in template")
	// ErrNoTemplate: the model has a template, it is unusable, and no
	// built-in could be guessed. Callers may fall back to completion mode.
	ErrNoTemplate = errors.New("chat: model template unusable and no built-in matches it")
	// ErrSegments: the template rendered, but where message content lies in
	// the output could not be established, so it cannot be tokenized safely.
	ErrSegments = errors.New("chat: cannot locate message content in the rendered template")
)

// RaiseError is a template's own refusal (Jinja's raise_exception, or the
// same rule in a built-in), e.g. "Conversation roles must alternate".
// Msg is meant for the user.
type RaiseError struct{ Msg string }

func (e *RaiseError) Error() string { return e.Msg }

// Options are what a template sees besides the messages: the variables
// llama.cpp passes to every chat template.
type Options struct {
	// AddGenerationPrompt appends the assistant header where the template
	// has one (add_generation_prompt).
	AddGenerationPrompt bool
	// BOS and EOS are the texts of the model's BOS and EOS tokens
	// (bos_token, eos_token).
	BOS, EOS string
	// DisableThinking passes enable_thinking=false; llama.cpp passes true
	// unless the user turns reasoning off, and so does the zero Options.
	// Qwen3's template then pre-fills an empty <think></think> block.
	DisableThinking bool
	// ReasoningEffort, when set, is passed as reasoning_effort: gpt-oss's
	// harmony template writes it into the system message ("Reasoning:
	// high") and defaults to "medium" without it. Empty: not passed, as
	// llama.cpp does unless asked (chat_template_kwargs).
	ReasoningEffort string
	// Now is the date a template may print (date_string, strftime_now);
	// the zero time means the current local time.
	Now time.Time
}

// ReasoningEfforts are the values gpt-oss's harmony template reads from
// reasoning_effort; it writes "Reasoning: medium" when none is passed.
var ReasoningEfforts = []string{"low", "medium", "high"}

// CheckReasoningEffort says whether e is one of ReasoningEfforts ("" is:
// it leaves the variable unset).
func CheckReasoningEffort(e string) error {
	if e == "" {
		return nil
	}
	for _, v := range ReasoningEfforts {
		if e == v {
			return nil
		}
	}
	return fmt.Errorf("reasoning effort %q: want one of %s", e, strings.Join(ReasoningEfforts, ", "))
}

// renderFunc renders a conversation to segments.
type renderFunc func(ctx context.Context, msgs []Message, o Options) ([]Segment, error)

// Template renders conversations into a model's prompt format. It is safe
// for concurrent use.
type Template struct {
	name   string
	render renderFunc
	// text renders the plain string where that is cheaper or more robust
	// than joining segments (a Jinja template needs one pass, not two, and
	// cannot fail to locate content); nil means Join(render(...)).
	text     func(ctx context.Context, msgs []Message, o Options) (string, error)
	fallback string
	// foldSystem: the template refuses or drops the system role, so, as
	// llama.cpp does, system prompts are folded into the next user turn.
	foldSystem bool
	// reasoning is how the model marks its reasoning (ThinkTags unless
	// the template speaks harmony).
	reasoning Reasoning
}

// Reasoning is how this template's model marks its reasoning in a reply.
func (t *Template) Reasoning() Reasoning {
	if t == nil || t.reasoning.Open == "" {
		return ThinkTags
	}
	return t.reasoning
}

// Name is "gguf" for the model's own template, else the built-in's name.
func (t *Template) Name() string { return t.name }

// FallbackReason says why the model's own template was not used when
// FromModel chose a built-in instead; it is empty otherwise.
func (t *Template) FallbackReason() string {
	if t == nil {
		return ""
	}
	return t.fallback
}

// FoldsSystem reports whether system prompts are folded into the first
// user turn because the template refuses or drops the system role.
func (t *Template) FoldsSystem() bool { return t != nil && t.foldSystem }

// Render renders msgs; addGenerationPrompt appends the assistant header
// where the template has one. bos and eos are the texts of the model's BOS
// and EOS tokens, exposed to templates as bos_token and eos_token.
func (t *Template) Render(msgs []Message, addGenerationPrompt bool, bos, eos string) (string, error) {
	return t.RenderWith(msgs, Options{AddGenerationPrompt: addGenerationPrompt, BOS: bos, EOS: eos})
}

// RenderSegments is Render split into segments that say which text came
// from message content; see Segment for how to tokenize them. Joined, the
// segments equal Render's output.
func (t *Template) RenderSegments(msgs []Message, addGenerationPrompt bool, bos, eos string) ([]Segment, error) {
	return t.RenderSegmentsWith(msgs, Options{AddGenerationPrompt: addGenerationPrompt, BOS: bos, EOS: eos})
}

// RenderWith is Render with every template variable given.
func (t *Template) RenderWith(msgs []Message, o Options) (string, error) {
	return t.RenderContext(context.Background(), msgs, o)
}

// RenderContext is RenderWith stopping, with an error, once ctx is done.
// A model's template renders under Limits and RenderTimeout; a limit it
// hits fails the render with an error naming the template and the limit
// ("render gguf template: template: step limit (2000000) exceeded").
func (t *Template) RenderContext(ctx context.Context, msgs []Message, o Options) (string, error) {
	if t != nil && t.text != nil {
		out, err := t.text(ctx, t.prepare(msgs), o)
		if err != nil {
			return "", fmt.Errorf("render %s template: %w", t.name, err)
		}
		return out, nil
	}
	segs, err := t.RenderSegmentsContext(ctx, msgs, o)
	if err != nil {
		return "", err
	}
	return Join(segs), nil
}

// RenderSegmentsWith is RenderSegments with every template variable given.
func (t *Template) RenderSegmentsWith(msgs []Message, o Options) ([]Segment, error) {
	return t.RenderSegmentsContext(context.Background(), msgs, o)
}

// RenderSegmentsContext is RenderSegmentsWith stopping, with an error,
// once ctx is done; see RenderContext for the limits.
func (t *Template) RenderSegmentsContext(ctx context.Context, msgs []Message, o Options) ([]Segment, error) {
	if t == nil || t.render == nil {
		return nil, errors.New("chat: no template (completion mode)")
	}
	segs, err := t.render(ctx, t.prepare(msgs), o)
	if err != nil {
		return nil, fmt.Errorf("render %s template: %w", t.name, err)
	}
	return segs, nil
}

func (t *Template) prepare(msgs []Message) []Message {
	msgs = t.Reasoning().answersOnly(msgs)
	if t.foldSystem {
		return FoldSystem(msgs)
	}
	return msgs
}

// answersOnly gives a harmony template the answers of earlier assistant
// turns: the conversation keeps each reply as the model wrote it, channel
// markup and reasoning included, and the template writes the final-channel
// markup itself (and, as gpt-oss's own does, drops earlier reasoning).
// Gemma 4's (Drop) get the answers too; <think> templates get the text as
// it was written; theirs decide.
func (r Reasoning) answersOnly(msgs []Message) []Message {
	if r.Headers == nil && !r.Drop {
		return msgs
	}
	var out []Message
	for i, m := range msgs {
		if m.Role != RoleAssistant {
			continue
		}
		if _, answer := r.Split(m.Content, false); answer != m.Content {
			if out == nil {
				out = slices.Clone(msgs)
			}
			out[i].Content = answer
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// FoldSystem moves system prompts into the user turn that follows them,
// joined by a newline, as llama.cpp (minja's polyfill) does for templates
// that refuse or drop the system role; a system prompt followed by
// anything but a user turn becomes a user turn of its own.
func FoldSystem(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	pending := ""
	flush := func() {
		if pending != "" {
			out = append(out, Message{Role: RoleUser, Content: pending})
			pending = ""
		}
	}
	for _, m := range msgs {
		switch {
		case m.Role == RoleSystem:
			if pending != "" {
				pending += "\n"
			}
			pending += m.Content
			continue
		case m.Role == RoleUser && pending != "":
			if m.Content != "" {
				m.Content = pending + "\n" + m.Content
			} else {
				m.Content = pending
			}
			pending = ""
		default:
			flush()
		}
		out = append(out, m)
	}
	flush()
	return out
}
