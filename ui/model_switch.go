package ui

import (
	"errors"
	"fmt"
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/inspector"
	"vkchat/ui/picker"
	"vkchat/ui/termtext"
)

// modelLoadedMsg is the end of loading the model /model asked for.
type modelLoadedMsg struct {
	ref string
	eng Engine
	err error
}

// switchModel is /model [REF]: with REF the model loads at once, without
// it the model picker opens over the chat. The conversation stays; the
// next reply renders it with the new model's template.
func (m *Model) switchModel(ref string) tea.Cmd {
	switch {
	case m.cfg.OpenModel == nil:
		m.setError("this chat cannot change models")
		return nil
	case m.gen != nil:
		m.setError("stop the reply first (esc), then /model")
		return nil
	case m.loadingModel != "":
		m.setError("still loading " + m.loadingModel)
		return nil
	}
	if ref = strings.TrimSpace(ref); ref != "" {
		return m.loadModel(ref)
	}
	m.picker = picker.Embedded(m.baseCtx, m.cfg.Picker)
	_, cmd := m.picker.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
	return tea.Batch(cmd, m.picker.Init())
}

// pickerUpdate hands a message to the open picker; once it is done its
// quit command is dropped (it would end the chat) and its choice loads.
func (m *Model) pickerUpdate(msg tea.Msg) tea.Cmd {
	_, cmd := m.picker.Update(msg)
	if !m.picker.Done() {
		return cmd
	}
	path, err := m.picker.Result()
	m.picker = nil
	switch {
	case errors.Is(err, picker.ErrCanceled):
		m.setStatus("still chatting with " + m.modelName())
		return nil
	case err != nil:
		m.setError(termtext.Sanitize(err.Error()))
		return nil
	}
	return m.loadModel(path)
}

// loadModel loads ref off the UI's goroutine.
func (m *Model) loadModel(ref string) tea.Cmd {
	m.loadingModel = termtext.Sanitize(ref)
	m.setStatus("loading " + m.loadingModel + "…")
	open, ctx := m.cfg.OpenModel, m.baseCtx
	return func() tea.Msg {
		eng, err := open(ctx, ref)
		return modelLoadedMsg{ref: ref, eng: eng, err: err}
	}
}

// modelLoaded moves the chat to the new model: the sampler settings carry
// over, the old model is closed, and the conversation is kept. A model
// that failed to load leaves the chat where it was.
func (m *Model) modelLoaded(msg modelLoadedMsg) {
	m.loadingModel = ""
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
	m.markSwitch(oldName)
	m.tr.Invalidate()
	m.input.SetPlaceholder("Message " + m.modelName() + "…")
	if m.info.Completion {
		m.input.SetPlaceholder("Text for the model to continue… (Enter on empty continues)")
	}
	if c, ok := old.(io.Closer); ok && old != m.eng {
		_ = c.Close()
	}
	m.saver.Save()
	status := fmt.Sprintf("now chatting with %s (%s); the conversation is kept", m.modelName(), m.templateLabel())
	if warn := m.info.ContextWarning(); warn != "" {
		m.setError(status + " · " + warn)
		return
	}
	m.setStatus(status)
}

// markSwitch notes where the replies of the model that was loaded end,
// since the transcript labels every reply with the model now loaded. A
// model that wrote nothing gets no note: with no reply at all there is
// nothing to mark, and after an earlier switch that note now leads to the
// new model.
func (m *Model) markSwitch(oldName string) {
	turns := m.conv.Turns()
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		for j, n := range t.Notes {
			if n.SwitchedFrom != "" {
				t.Notes[j].Text = switchNote(n.SwitchedFrom, m.modelName())
				return
			}
		}
		if t.Role == "assistant" && (t.Content != "" || len(t.Steps) > 0 || t.Think != nil) {
			last := m.conv.Last()
			last.Notes = append(last.Notes, conversation.Note{Kind: conversation.NoteInfo, Text: switchNote(oldName, m.modelName()), SwitchedFrom: oldName})
			return
		}
	}
}

func switchNote(from, to string) string {
	return fmt.Sprintf("the replies above are %s's; %s continues from here", from, to)
}

// templateLabel names how the model reads the conversation.
func (m *Model) templateLabel() string {
	if m.info.Completion {
		return "completion mode"
	}
	return "template " + termtext.Sanitize(m.info.TemplateName)
}
