package ui

import (
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
