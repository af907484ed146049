package ui

import (
	"strings"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
)

type noteKind int

const (
	noteInfo noteKind = iota
	noteWarn
	noteError
)

// note is something the UI says about a turn (a dropped-context warning,
// an engine error); it is shown with the turn but never sent to the model.
type note struct {
	kind noteKind
	text string
	top  bool // shown under the turn's label rather than after its text
}

// turn is one message of the conversation plus what this session learned
// while generating it.
type turn struct {
	role      string
	content   string      // raw text, as the model produced it or the user typed it
	steps     []step      // tokens generated in this session; empty for loaded turns
	detail    *turnDetail // their candidates and funnel, while kept (stepdetail.go)
	notes     []note
	streaming bool
	done      *engine.DoneInfo
	think     *thinkBlock // a thinking model's reasoning; content is then the answer alone
	tree      turnTree    // branch point and fork, see fork.go
	export    *exportInfo // how it was requested, for /export
	cache     turnRender
	md        markdownCache
}

func (t *turn) addNote(kind noteKind, text string, top bool) {
	t.notes = append(t.notes, note{kind: kind, text: text, top: top})
}

// appendToken adds a generated token to a reply.
func (t *turn) appendToken(info engine.TokenInfo) {
	if t.think != nil || info.Thinking {
		t.appendThinking(info)
		return
	}
	start := len(t.content)
	t.content += info.Piece
	t.addStep(info, start)
}

// stepIndex maps each byte of the raw content to the index of the step that
// produced it, -1 for bytes no step produced (typed or loaded text).
func (t *turn) stepIndex() []int {
	idx := make([]int, len(t.content))
	for i := range idx {
		idx[i] = -1
	}
	for k, s := range t.steps {
		for b := int(s.start); b < int(s.end) && b < len(idx); b++ {
			idx[b] = k
		}
	}
	return idx
}

// chosenProb is the probability the model gave the token it produced at
// step k, for the heatmap.
func (t *turn) chosenProb(k int) float32 {
	if k < 0 || k >= len(t.steps) {
		return 0
	}
	return t.steps[k].prob
}

// messages is the conversation as the engine and the save file see it. The
// reply being generated is left out of requests (withPartial=false) but
// kept in saves, so a crash mid-reply still keeps what was written.
func (m *Model) messages(withPartial bool) []chat.Message {
	var out []chat.Message
	if !m.info.Completion && m.system != "" {
		out = append(out, chat.Message{Role: chat.RoleSystem, Content: m.system})
	}
	for _, t := range m.turns {
		if t.streaming && !withPartial {
			continue
		}
		text := t.modelText()
		if text == "" {
			continue
		}
		out = append(out, chat.Message{Role: t.role, Content: text})
	}
	return out
}

// lastTurn returns the newest turn, or nil.
func (m *Model) lastTurn() *turn {
	if len(m.turns) == 0 {
		return nil
	}
	return m.turns[len(m.turns)-1]
}

// userText is what a typed message becomes: chat turns lose surrounding
// blank space, completion text is kept exactly because it continues a text.
func (m *Model) userText(s string) string {
	if m.info.Completion {
		return s
	}
	return strings.TrimSpace(s)
}
