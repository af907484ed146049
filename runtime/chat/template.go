package chat

import (
	"errors"
	"fmt"
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

// renderFunc renders a conversation to segments.
type renderFunc func(msgs []Message, addGenerationPrompt bool, bos, eos string) ([]Segment, error)

// Template renders conversations into a model's prompt format. It is safe
// for concurrent use.
type Template struct {
	name   string
	render renderFunc
	// text renders the plain string where that is cheaper or more robust
	// than joining segments (a Jinja template needs one pass, not two, and
	// cannot fail to locate content); nil means Join(render(...)).
	text     func(msgs []Message, addGenerationPrompt bool, bos, eos string) (string, error)
	fallback string
}

// Name is "gguf" for the model's own template, else the built-in's name.
func (t *Template) Name() string { return t.name }

// FallbackReason says why the model's own template was not used when
// FromModel chose a built-in instead; it is empty otherwise.
func (t *Template) FallbackReason() string { return t.fallback }

// Render renders msgs; addGenerationPrompt appends the assistant header
// where the template has one. bos and eos are the texts of the model's BOS
// and EOS tokens, exposed to templates as bos_token and eos_token.
func (t *Template) Render(msgs []Message, addGenerationPrompt bool, bos, eos string) (string, error) {
	if t != nil && t.text != nil {
		out, err := t.text(msgs, addGenerationPrompt, bos, eos)
		if err != nil {
			return "", fmt.Errorf("render %s template: %w", t.name, err)
		}
		return out, nil
	}
	segs, err := t.RenderSegments(msgs, addGenerationPrompt, bos, eos)
	if err != nil {
		return "", err
	}
	return Join(segs), nil
}

// RenderSegments is Render split into segments that say which text came
// from message content; see Segment for how to tokenize them. Joined, the
// segments equal Render's output.
func (t *Template) RenderSegments(msgs []Message, addGenerationPrompt bool, bos, eos string) ([]Segment, error) {
	if t == nil || t.render == nil {
		return nil, errors.New("chat: no template (completion mode)")
	}
	segs, err := t.render(msgs, addGenerationPrompt, bos, eos)
	if err != nil {
		return nil, fmt.Errorf("render %s template: %w", t.name, err)
	}
	return segs, nil
}
