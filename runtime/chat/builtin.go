package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The built-ins are written in Go rather than as Jinja so that they need
// no sentinel pass to know where content lies, cannot be derailed by what
// a message contains, and work when the Jinja engine rejects a model's
// template. Each reproduces, byte for byte, what Hugging Face's Python
// Jinja renders from the public template of its model family; the tests
// check them against those templates.
//
// gigachat is the exception: its public template reads tokenizer_config
// extras (additional_special_tokens) that a GGUF file does not carry, so
// it reproduces llama.cpp's own GigaChat formatter instead, which is what
// llama.cpp renders for that template.
var builtins = map[string]builtinFunc{
	"chatml":   renderChatML,
	"gigachat": renderGigaChat,
	"llama2":   renderLlama2,
	"llama3":   renderLlama3,
	"zephyr":   renderZephyr,
	"phi3":     renderPhi3,
}

// BuiltinNames lists the built-in template names, sorted.
func BuiltinNames() []string {
	names := make([]string, 0, len(builtins))
	for n := range builtins {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Builtin returns the named built-in template.
func Builtin(name string) (*Template, error) {
	r, ok := builtins[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownTemplate, name, strings.Join(BuiltinNames(), ", "))
	}
	render := func(_ context.Context, msgs []Message, o Options) ([]Segment, error) {
		return r(msgs, o.AddGenerationPrompt, o.BOS, o.EOS)
	}
	return &Template{name: name, render: render}, nil
}

// builtinFunc is a built-in's renderer; built-ins read no variable but
// these.
type builtinFunc func(msgs []Message, gen bool, bos, eos string) ([]Segment, error)

// renderChatML follows the generic ChatML template (OpenHermes, Qwen and
// SmolLM without their default system prompts).
func renderChatML(msgs []Message, gen bool, _, _ string) ([]Segment, error) {
	var s segments
	for _, m := range msgs {
		s.text("<|im_start|>" + m.Role + "\n")
		s.content(m.Content)
		s.text("<|im_end|>\n")
	}
	if gen {
		s.text("<|im_start|>assistant\n")
	}
	return s.list(), nil
}

// errAlternate is the Llama 2 template's own message, so that users see
// the same complaint whichever engine renders it.
const errAlternate = "Conversation roles must alternate user/assistant/user/assistant/..."

// renderLlama2 follows Llama-2-chat: the system prompt is folded into the
// first user turn inside <<SYS>> markers, every user turn starts with BOS,
// turns are stripped, and roles must alternate. The template has no
// generation prompt: the assistant simply continues after [/INST].
func renderLlama2(msgs []Message, _ bool, bos, eos string) ([]Segment, error) {
	// The template reads messages[0]['role'] unguarded, which Jinja2
	// rejects on an empty conversation.
	if len(msgs) == 0 {
		return nil, errors.New("messages[0] is undefined: the conversation is empty")
	}
	loop := msgs
	var system *Message
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		system, loop = &msgs[0], msgs[1:]
	}
	var s segments
	for i, m := range loop {
		if (m.Role == RoleUser) != (i%2 == 0) {
			return nil, &RaiseError{Msg: errAlternate}
		}
		// The template strips the whole string, so for the first turn
		// the strip can eat into the <<SYS>> markup when content is blank.
		turn := []Segment{{Text: m.Content, Content: true}}
		if i == 0 && system != nil {
			turn = []Segment{
				{Text: "<<SYS>>\n"},
				{Text: system.Content, Content: true},
				{Text: "\n<</SYS>>\n\n"},
				{Text: m.Content, Content: true},
			}
		}
		turn = pyStripSegments(turn)
		switch m.Role {
		case RoleUser:
			s.text(bos + "[INST] ")
			s.addAll(turn)
			s.text(" [/INST]")
		case RoleAssistant:
			s.text(" ")
			s.addAll(turn)
			s.text(" " + eos)
		}
	}
	return s.list(), nil
}

// renderLlama3 follows Llama-3-Instruct: content is trimmed, BOS opens the
// first turn.
func renderLlama3(msgs []Message, gen bool, bos, _ string) ([]Segment, error) {
	var s segments
	for i, m := range msgs {
		if i == 0 {
			s.text(bos)
		}
		s.text("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n")
		s.content(pyStrip(m.Content))
		s.text("<|eot_id|>")
	}
	if gen {
		s.text("<|start_header_id|>assistant<|end_header_id|>\n\n")
	}
	return s.list(), nil
}

// renderZephyr follows Zephyr-7B-beta and TinyLlama-Chat, as rendered with
// trim_blocks: each turn ends with EOS and a newline. Other roles print
// nothing, and the generation prompt hangs off the last message, so an
// empty conversation gets none.
func renderZephyr(msgs []Message, gen bool, _, eos string) ([]Segment, error) {
	var s segments
	for i, m := range msgs {
		switch m.Role {
		case RoleUser, RoleSystem, RoleAssistant:
			s.text("<|" + m.Role + "|>\n")
			s.content(m.Content)
			s.text(eos + "\n")
		}
		if i == len(msgs)-1 && gen {
			s.text("<|assistant|>\n")
		}
	}
	return s.list(), nil
}

// renderPhi3 follows Phi-3.5-mini-instruct: an empty system prompt is
// left out, and without a generation prompt the text ends with EOS.
func renderPhi3(msgs []Message, gen bool, _, eos string) ([]Segment, error) {
	var s segments
	for _, m := range msgs {
		switch {
		case m.Role == RoleSystem && m.Content != "",
			m.Role == RoleUser, m.Role == RoleAssistant:
			s.text("<|" + m.Role + "|>\n")
			s.content(m.Content)
			s.text("<|end|>\n")
		}
	}
	if gen {
		s.text("<|assistant|>\n")
	} else {
		s.text(eos)
	}
	return s.list(), nil
}

// renderGigaChat is llama.cpp's GigaChat formatter (llm_chat_apply_template),
// BOS text included as it writes it.
func renderGigaChat(msgs []Message, gen bool, _, _ string) ([]Segment, error) {
	var s segments
	s.text("<s>")
	loop := msgs
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		s.content(msgs[0].Content)
		s.text("<|message_sep|>")
		loop = msgs[1:]
	}
	for _, m := range loop {
		switch m.Role {
		case RoleUser:
			s.text("user<|role_sep|>")
			s.content(m.Content)
			s.text("<|message_sep|>available functions<|role_sep|>[]<|message_sep|>")
		case RoleAssistant:
			s.text("assistant<|role_sep|>")
			s.content(m.Content)
			s.text("<|message_sep|>")
		}
	}
	if gen {
		s.text("assistant<|role_sep|>")
	}
	return s.list(), nil
}
