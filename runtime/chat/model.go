package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// probeText is the content of the one-message conversation a model's
// template must render before it is trusted. A single user turn is the one
// shape every chat template accepts; richer probes would reject templates
// that legitimately refuse, say, a system prompt.
const probeText = "Hello"

// FromModel picks the template for a model: its own GGUF
// tokenizer.chat_template when that compiles and renders a probe
// conversation with the content locatable, else a built-in guessed from
// the template's markup or the architecture (see FallbackReason), else
// ErrNoTemplate. A model without any template yields (nil, nil): it is a
// completion model.
func FromModel(ggufTemplate string, arch string) (*Template, error) {
	return FromModelContext(context.Background(), ggufTemplate, arch)
}

// FromModelContext is FromModel whose checks of the model's template stop
// once ctx is done. The checks run under Limits and RenderTimeout, as
// every later render does, so a template that passes them cannot exhaust
// the machine on a later turn either.
func FromModelContext(ctx context.Context, ggufTemplate string, arch string) (*Template, error) {
	if strings.TrimSpace(ggufTemplate) == "" {
		return nil, nil
	}
	t, err := modelTemplate(ctx, ggufTemplate)
	if err != nil && ctx.Err() != nil {
		// Cancelled, not unusable: no fallback to guess.
		return nil, err
	}
	if err == nil {
		return t, nil
	}
	name := guessBuiltin(ggufTemplate, arch)
	if name == "" {
		return nil, fmt.Errorf("%w: %w", ErrNoTemplate, err)
	}
	b, _ := Builtin(name)
	b.fallback = fmt.Sprintf("the model's template was not usable (%v); using the built-in %s template instead", err, name)
	return b, nil
}

func modelTemplate(ctx context.Context, src string) (*Template, error) {
	j, err := compileJinja(src)
	if err != nil {
		return nil, limitNamed(err)
	}
	segs, err := j.render(ctx, []Message{{Role: RoleUser, Content: probeText}}, Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"})
	if err != nil {
		return nil, limitNamed(err)
	}
	found := false
	for _, s := range segs {
		found = found || (s.Content && s.Text == probeText)
	}
	if !found {
		return nil, fmt.Errorf("it does not print the message content (probe rendered %q)", Join(segs))
	}
	return &Template{name: "gguf", render: j.render, text: j.text, foldSystem: !j.supportsSystem(ctx), reasoning: ReasoningOf(src)}, nil
}

// limitNamed says which template hit a limit: "chat template (gguf):
// template: step limit (2000000) exceeded".
func limitNamed(err error) error {
	if errors.Is(err, jinja.ErrLimit) {
		return fmt.Errorf("chat template (gguf): %w", err)
	}
	return err
}

// supportsSystem is llama.cpp's supports_system_role capability: a
// conversation of a system and a user turn renders with the system text in
// it. A template that raises on it or drops it gets its system prompts
// folded into the first user turn, as llama.cpp does.
func (j *jinjaTemplate) supportsSystem(ctx context.Context) bool {
	const needle = "<System Needle>"
	out, err := j.text(ctx, []Message{{Role: RoleSystem, Content: needle}, {Role: RoleUser, Content: "<User Needle>"}},
		Options{BOS: "<s>", EOS: "</s>"})
	return err == nil && strings.Contains(out, needle)
}

// guessBuiltin names the built-in whose markup the template uses, or one
// typical of the architecture. Markup is the better witness: "llama" is
// the architecture of Llama 2, Llama 3, Mistral, TinyLlama and SmolLM
// alike, so it is not guessed from at all.
func guessBuiltin(src, arch string) string {
	switch {
	case strings.Contains(src, "<|im_start|>"):
		return "chatml"
	case strings.Contains(src, "<|start_header_id|>"):
		return "llama3"
	case strings.Contains(src, "<|user|>") && strings.Contains(src, "<|end|>"):
		return "phi3"
	case strings.Contains(src, "<|user|>"):
		return "zephyr"
	case strings.Contains(src, "[INST]"):
		return "llama2"
	case strings.Contains(src, "message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]"):
		// llama.cpp recognises GigaChat by this line.
		return "gigachat"
	}
	switch {
	case strings.HasPrefix(arch, "qwen"):
		return "chatml"
	case arch == "phi3":
		return "phi3"
	}
	return ""
}
