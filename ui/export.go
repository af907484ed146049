package ui

import (
	"fmt"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// SamplerStater is implemented by engines whose sampler state can be read,
// so an export replays a reply that was not its session's first.
type SamplerStater interface {
	SamplerState() ([]byte, error)
}

// recordRequest keeps req and the sampler state with the reply for /export.
func (m *Model) recordRequest(req engine.Request, reply *conversation.Turn) {
	reply.Export = &conversation.ExportInfo{Req: req}
	if s, ok := m.eng.(SamplerStater); ok {
		if st, err := s.SamplerState(); err == nil {
			reply.Export.State = st
		}
	}
}

// exportTurn is the reply /export writes: the inspected one, else the newest
// reply generated in this session.
func (m *Model) exportTurn() *conversation.Turn {
	if m.focus == focusTranscript && m.insp.Turn() != nil {
		return m.insp.Turn()
	}
	rs := m.conv.Replies()
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

// exportReply writes a reply as the JSON Lines export vkchat replay reads.
func (m *Model) exportReply(path string) {
	t := m.exportTurn()
	switch {
	case t == nil || t.Export == nil:
		m.setError("nothing to export: /export writes a reply generated in this session")
		return
	case t.Streaming:
		m.setError("the reply is still being written: export it when it is done")
		return
	case !t.HasDetail():
		m.setError(fmt.Sprintf("details not kept for this older reply (only the %d newest replies keep each token's alternatives): /export a recent one", conversation.DetailReplies))
		return
	}
	path = conversation.ExpandHome(path)
	if err := conversation.WriteExport(path, m.info, m.smp.MaxTokens, t, m.eng.TokenText); err != nil {
		m.setError("could not export: " + err.Error())
		return
	}
	m.setStatus(fmt.Sprintf("exported %d tokens to %s · vkchat replay %s re-runs them", len(t.Steps), path, path))
}
