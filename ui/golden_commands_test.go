package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"vkchat/models/store"
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/ui/picker"
)

// chatmlEngine is the fake engine with a prompt: its requests rendered by
// the built-in ChatML template, one token per segment.
type chatmlEngine struct{ *fakeEngine }

func (e chatmlEngine) RenderPrompt(req engine.Request) (engine.RenderedPrompt, error) {
	tmpl, err := chat.Builtin("chatml")
	if err != nil {
		return engine.RenderedPrompt{}, err
	}
	segs, err := tmpl.RenderSegmentsWith(req.Messages, chat.Options{AddGenerationPrompt: true})
	if err != nil {
		return engine.RenderedPrompt{}, err
	}
	r := engine.RenderedPrompt{Template: "chatml", Text: chat.Join(segs)}
	// Markup lines are special tokens and their line breaks text, as a
	// ChatML vocabulary has them.
	add := func(text string, special bool) {
		if text != "" {
			r.Tokens = append(r.Tokens, engine.PromptToken{ID: int32(len(r.Tokens)), Text: text, Piece: text, Special: special})
		}
	}
	for _, s := range segs {
		if s.Content {
			add(s.Text, false)
			continue
		}
		for i, line := range strings.Split(s.Text, "\n") {
			if i > 0 {
				add("\n", false)
			}
			add(line, true)
		}
	}
	return r, nil
}

// The screens of the chat commands, regenerated with
//
//	go test ./ui -run TestGoldenCommands -update
func TestGoldenCommands(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{80, 24}, {160, 48}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		eng := chatmlEngine{newFakeEngine()}
		cfg := Config{
			OpenModel: func(context.Context, string) (Engine, error) { return nil, fmt.Errorf("not in this test") },
			Picker: picker.Options{StoreDir: "/models", List: func() ([]store.Model, error) {
				return []store.Model{{Name: "bartowski/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0", Path: "/m/q.gguf", Arch: "qwen3", Params: 596_049_920, Quant: "Q8_0", Size: 639_446_688}}, nil
			}},
		}
		m := newTestModel(t, eng, cfg)
		h := newHarness(t, m)
		h.size(sz.w, sz.h)

		// /prompt in a fresh chat: the placeholder stands for the message.
		h.typeText("/prompt")
		h.key("enter")
		screen(t, h, name+"_prompt_fresh", sz.w, sz.h)
		h.key("esc")

		h.say("Write a tiny Go program")
		h.say("Thanks")
		// /edit 1, changed and sent: a new branch at the first message.
		h.typeText("/edit 1")
		h.key("enter")
		screen(t, h, name+"_editing", sz.w, sz.h)
		h.key("ctrl+u")
		h.say("Write a tiny Go program, please")
		screen(t, h, name+"_edited", sz.w, sz.h)

		// /model: the picker over the chat.
		h.typeText("/model")
		h.key("enter")
		h.waitFor("the picker's list", func() bool { return strings.Contains(m.View(), "Qwen3") })
		screen(t, h, name+"_model_picker", sz.w, sz.h)
		h.key("esc")
	}
}
