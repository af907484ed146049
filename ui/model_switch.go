package ui

import (
	"context"
	"fmt"
	"io"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/inspector"
	"vkchat/ui/panels"
	"vkchat/ui/switcher"
	"vkchat/ui/termtext"
)

// modelLoadedMsg is the end of loading the model /model asked for.
type modelLoadedMsg struct {
	ref string
	eng Engine
	err error
}

// switchHost is what /model and /backend (ui/switcher) need of the chat.
type switchHost struct{ *Model }

func (h switchHost) Info(s string)                   { h.setStatus(s) }
func (h switchHost) Error(s string)                  { h.setError(s) }
func (h switchHost) Busy() bool                      { return h.gen != nil }
func (h switchHost) Generating() bool                { return h.generating() }
func (h switchHost) Context() context.Context        { return h.baseCtx }
func (h switchHost) Size() (w, height int)           { return h.width, h.height }
func (h switchHost) ModelName() string               { return h.modelName() }
func (h switchHost) KVType() string                  { return h.info.KVType }
func (h switchHost) Speculator() switcher.Speculator { s, _ := h.eng.(switcher.Speculator); return s }

func (h switchHost) Open(ref string) tea.Cmd {
	open, ctx := h.cfg.OpenModel, h.baseCtx
	return func() tea.Msg {
		eng, err := open(ctx, ref)
		return modelLoadedMsg{ref: ref, eng: eng, err: err}
	}
}

func (h switchHost) Backend() func(string) (string, error) {
	sw, ok := h.eng.(BackendSwitcher)
	if !ok {
		return nil
	}
	return func(name string) (string, error) {
		if err := sw.SwitchBackend(name); err != nil {
			return "", err
		}
		h.info = h.eng.Info()
		return h.info.Backend + " (" + termtext.Sanitize(h.info.Device) + ")", nil
	}
}

// modelLoaded moves the chat to the new model: the sampler settings carry
// over, the old model is closed, and the conversation is kept. A model
// that failed to load leaves the chat where it was.
func (m *Model) modelLoaded(msg modelLoadedMsg) {
	m.sw.Loading = ""
	if msg.err != nil {
		m.setError(fmt.Sprintf("could not open %s: %s; still chatting with %s", termtext.Sanitize(msg.ref), termtext.Sanitize(msg.err.Error()), m.modelName()))
		return
	}
	oldName := m.modelName()
	old := m.eng
	m.eng = msg.eng
	m.info = msg.eng.Info()
	m.smp.SetEngine(m.eng)
	m.stats = m.eng.Stats()
	m.conv.SetCompletion(m.info.Completion)
	m.insp.Probs = inspector.NextToken()
	if m.focus == focusTranscript {
		m.leaveInspector()
	}
	m.conv.MarkSwitch(oldName, m.modelName())
	m.tr.Invalidate()
	m.setPlaceholder()
	if c, ok := old.(io.Closer); ok && old != m.eng {
		_ = c.Close()
	}
	m.saver.Save()
	status := fmt.Sprintf("now chatting with %s (%s); the conversation is kept", m.modelName(), panels.TemplateLabel(m.info))
	if warn := m.info.ContextWarning(); warn != "" {
		m.setError(status + " · " + warn)
		return
	}
	m.setStatus(status)
}

// setPlaceholder says in the empty input what Enter does with this model.
func (m *Model) setPlaceholder() {
	m.input.SetPlaceholder("Message " + m.modelName() + "…")
	if m.info.Completion {
		m.input.SetPlaceholder("Text for the model to continue… (Enter on empty continues)")
	}
}
