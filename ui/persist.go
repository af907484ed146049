package ui

import (
	"time"

	"vkchat/runtime/sample"
	"vkchat/ui/conversation"
	"vkchat/ui/helppane"
	"vkchat/ui/keeper"
	"vkchat/ui/termtext"
)

// saveMeta is what the save file says about the session.
func (m *Model) saveMeta() conversation.Meta {
	return conversation.Meta{Model: m.info.Path, ModelName: m.info.Name, Params: m.smp.Params}
}

// rescueUnsaved runs when the chat ends with the last save failed; the
// error says where the conversation went instead.
func (m *Model) rescueUnsaved() error { return m.saver.RescueChat() }

// keeperHost is what the conversation's keeper (ui/keeper) needs of the chat.
type keeperHost struct{ *Model }

func (h keeperHost) Info(s string)                 { h.setStatus(s) }
func (h keeperHost) Error(s string)                { h.setError(s) }
func (h keeperHost) Meta() conversation.Meta       { return h.saveMeta() }
func (h keeperHost) Now() time.Time                { return h.now() }
func (h keeperHost) Completion() bool              { return h.info.Completion }
func (h keeperHost) Generating() bool              { return h.generating() }
func (h keeperHost) Reset()                        { h.detachGeneration(); h.resetChat() }
func (h keeperHost) SetParams(p sample.Params)     { h.smp.Set(p) }
func (h keeperHost) Redraw()                       { h.tr.Invalidate() }
func (h keeperHost) Copy(s string) (string, error) { return h.copy(s) }

func (h keeperHost) ShowChats(dir string, saved []conversation.Saved, err error) {
	p := &helppane.Chats{Dir: dir, Saved: saved}
	if err != nil {
		p.Err = termtext.Sanitize(err.Error())
	}
	h.pane.ShowChats(p)
}

// ExportTurn is the reply /export writes: the inspected one, else the
// newest reply generated in this session.
func (h keeperHost) ExportTurn() *conversation.Turn {
	if h.focus == focusTranscript && h.insp.Turn() != nil {
		return h.insp.Turn()
	}
	rs := h.conv.Replies()
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

func (h keeperHost) Export(path string, t *conversation.Turn, lens bool) (int, error) {
	ls := h.insp.Lenses(t, lens, inspectorHost(h).LensStamp())
	return len(ls), conversation.WriteExport(path, h.info, h.smp.MaxTokens, t, h.eng.TokenText, ls)
}

// Edit puts message n in the editor (/edit): sending it makes a branch.
func (h keeperHost) Edit(t *conversation.Turn, n int) {
	h.edit = &editing{turn: t, n: n}
	h.input.SetValue(t.Content)
}

// systemCopier is /copy's clipboard on the program's terminal (Run).
var systemCopier = keeper.SystemCopier
