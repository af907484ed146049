package conversation

import (
	"math"
	"slices"
	"strings"
	"time"

	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
)

// NoteKind is how serious a note is.
type NoteKind int

// The kinds of note, from a remark to an engine error.
const (
	NoteInfo NoteKind = iota
	NoteWarn
	NoteError
)

// Note is something the UI says about a turn (a dropped-context warning,
// an engine error); it is shown with the turn but never sent to the model.
type Note struct {
	Kind NoteKind
	Text string
	Top  bool // shown under the turn's label rather than after its text
	End  bool // how the reply ended (SetEndNote): a reply has one
	// SwitchedFrom marks /model's note: the model whose replies end here.
	SwitchedFrom string
}

// Turn is one message of the conversation plus what this session learned
// while generating it.
type Turn struct {
	Role      string
	Content   string      // raw text, as the model produced it or the user typed it
	Steps     []Step      // tokens generated in this session; empty for loaded turns
	detail    *turnDetail // their candidates and funnel, while kept (detail.go)
	Notes     []Note
	Streaming bool
	Done      *engine.DoneInfo
	Think     *ThinkBlock // a thinking model's reasoning; Content is then the answer alone
	Tree      Tree        // branch point and fork, see tree.go
	Export    *ExportInfo // how it was requested, for /export
}

// AddNote attaches a note to the turn.
func (t *Turn) AddNote(kind NoteKind, text string, top bool) {
	t.Notes = append(t.Notes, Note{Kind: kind, Text: text, Top: top})
}

// SetEndNote says how the reply ended ("stopped", a limit), replacing
// what an earlier part of it said: a reply stopped with Esc and then
// continued has ended once, not twice.
func (t *Turn) SetEndNote(kind NoteKind, text string) {
	t.Notes = slices.DeleteFunc(t.Notes, func(n Note) bool { return n.End })
	t.Notes = append(t.Notes, Note{Kind: kind, Text: text, End: true})
}

// AppendToken adds a generated token to a reply.
func (t *Turn) AppendToken(info engine.TokenInfo) {
	if t.Think != nil || info.Thinking {
		t.appendThinking(info)
		return
	}
	start := len(t.Content)
	t.Content += info.Piece
	t.addStep(info, start)
}

// StepIndex maps each byte of the raw content to the index of the step that
// produced it, -1 for bytes no step produced (typed or loaded text).
func (t *Turn) StepIndex() []int {
	idx := make([]int, len(t.Content))
	for i := range idx {
		idx[i] = -1
	}
	for k, s := range t.Steps {
		for b := int(s.Start); b < int(s.End) && b < len(idx); b++ {
			idx[b] = k
		}
	}
	return idx
}

// ChosenProb is the probability the model gave the token it produced at
// step k, for the heatmap.
func (t *Turn) ChosenProb(k int) float32 {
	if k < 0 || k >= len(t.Steps) {
		return 0
	}
	return t.Steps[k].Prob
}

// Surprisal is −log₂ p of the token step k produced: from the engine's exact
// log-probability when it reported one, else from the candidates.
func (t *Turn) Surprisal(k int) float64 {
	if k < 0 || k >= len(t.Steps) {
		return 0
	}
	if s := t.Steps[k]; s.flags&stepLogZ != 0 {
		return -s.LogProb / math.Ln2
	}
	if p := t.ChosenProb(k); p > 0 {
		return -math.Log2(float64(p))
	}
	return 0
}

// ThinkBlock is the reasoning of a thinking model's reply (Qwen3,
// DeepSeek-R1, SmolLM3), as the engine marked it. The turn's content then
// holds only the answer; Raw keeps the reply as the model wrote it, tags
// included, which is what the conversation sends back so the template
// decides what earlier reasoning the model sees.
type ThinkBlock struct {
	Raw    string
	Text   string        // the reasoning, tags left out
	Tokens int           // tokens of the block, tags included; 0 for a loaded turn
	Dur    time.Duration // their decode time
	Open   bool          // the model is still reasoning
}

// appendThinking is AppendToken for a reply that has reasoning: the piece
// goes to Raw, its answer part to Content, its reasoning to the block.
func (t *Turn) appendThinking(info engine.TokenInfo) {
	if t.Think == nil {
		// Anything before the block was blank (the engine only opens one
		// at the start of a reply): it belongs to neither part.
		t.Think = &ThinkBlock{Raw: t.Content}
		t.Content = ""
	}
	b := t.Think
	b.Raw += info.Piece
	if info.Thinking {
		b.Tokens++
		b.Dur += info.Duration
		b.Text += info.Thought
	}
	b.Open = info.Thinking && info.Answer == ""
	start := len(t.Content)
	t.Content += info.Answer
	t.addStep(info, start)
}

// ModelText is the turn as the model sees it in the conversation.
func (t *Turn) ModelText() string {
	if t.Think != nil {
		return t.Think.Raw
	}
	return t.Content
}

// SplitLoaded gives a loaded assistant turn its reasoning block when the
// saved text has one; a reply whose prompt opened the block starts without
// "<think>" but still closes it. A harmony reply (gpt-oss) keeps its
// analysis channel as the reasoning and its final message as the text.
func (t *Turn) SplitLoaded() {
	if t.Role != chat.RoleAssistant {
		return
	}
	var thought, answer string
	if strings.Contains(t.Content, "<|channel|>") { // a harmony reply (gpt-oss)
		thought, answer = chat.Harmony.Split(t.Content, false)
	} else {
		c, o := strings.Index(t.Content, chat.ThinkClose), strings.Index(t.Content, chat.ThinkOpen)
		if c < 0 {
			return
		}
		thought, answer = chat.SplitThinking(t.Content, o < 0 || o > c)
	}
	if thought == "" && answer == t.Content {
		return
	}
	t.Think = &ThinkBlock{Raw: t.Content, Text: thought}
	t.Content = answer
}

// ContinueFrom makes a new reply start with what a fork kept of the reply
// it continues (text, steps, detail and reasoning before the fork point).
func (t *Turn) ContinueFrom(kept Turn) {
	t.Content, t.Steps, t.detail, t.Think = kept.Content, kept.Steps, kept.detail, kept.Think
}
