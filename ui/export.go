package ui

import (
	"errors"
	"fmt"
	"os"

	"vkchat/runtime/engine"
	"vkchat/runtime/engine/trace"
)

// SamplerStater is implemented by engines whose sampler state can be read,
// so an export replays a reply that was not its session's first.
type SamplerStater interface {
	SamplerState() ([]byte, error)
}

// errDetailsNotKept: the reply is older than the ones that keep their
// per-token detail (stepdetail.go).
var errDetailsNotKept = errors.New("details not kept for this older reply")

// exportInfo is what a reply's export needs from when it was requested.
type exportInfo struct {
	req   engine.Request
	state []byte // the sampler's generator state as the reply began
}

// recordRequest keeps req and the sampler state with the reply for /export.
func (m *Model) recordRequest(req engine.Request, reply *turn) {
	reply.export = &exportInfo{req: req}
	if s, ok := m.eng.(SamplerStater); ok {
		if st, err := s.SamplerState(); err == nil {
			reply.export.state = st
		}
	}
}

// exportTurn is the reply /export writes: the inspected one, else the newest
// reply generated in this session.
func (m *Model) exportTurn() *turn {
	if m.focus == focusTranscript && m.insp.turn != nil {
		return m.insp.turn
	}
	rs := m.repliesWithTokens()
	if len(rs) == 0 {
		return nil
	}
	return rs[len(rs)-1]
}

// exportReply writes a reply as the JSON Lines export vkchat replay reads.
func (m *Model) exportReply(path string) {
	t := m.exportTurn()
	switch {
	case t == nil || t.export == nil:
		m.setError("nothing to export: /export writes a reply generated in this session")
		return
	case t.streaming:
		m.setError("the reply is still being written: export it when it is done")
		return
	case !t.hasDetail():
		m.setError(fmt.Sprintf("details not kept for this older reply (only the %d newest replies keep each token's alternatives): /export a recent one", detailReplies))
		return
	}
	path = expandHome(path)
	if err := writeExport(path, m.info, m.cfg.MaxTokens, t, m.eng.TokenText); err != nil {
		m.setError("could not export: " + err.Error())
		return
	}
	m.setStatus(fmt.Sprintf("exported %d tokens to %s · vkchat replay %s re-runs them", len(t.steps), path, path))
}

// exportHeader describes how reply t was generated.
func exportHeader(info engine.ModelInfo, maxTokens int, t *turn) (trace.Header, error) {
	first, ok := t.stepInfo(0)
	if !ok {
		return trace.Header{}, errDetailsNotKept
	}
	sum, err := trace.FileSHA256(info.Path)
	if err != nil {
		return trace.Header{}, fmt.Errorf("hash the model file: %w", err)
	}
	h := trace.Header{Type: "header", Model: info.Path, ModelSHA256: sum, Backend: info.Backend,
		Context: info.ContextSize, KVType: info.KVType, MaxTokens: maxTokens,
		Params: trace.ParamsOf(first.Params), SamplerState: t.export.state, Vkchat: trace.Version(),
		DisableThinking: t.export.req.DisableThinking}
	if info.Completion {
		h.Template = "none"
		for _, msg := range t.export.req.Messages {
			h.Prompt += msg.Content
		}
	} else {
		h.Template, h.Messages = info.TemplateName, t.export.req.Messages
	}
	return h, nil
}

func writeExport(path string, info engine.ModelInfo, maxTokens int, t *turn, text func(int32) string) (err error) {
	h, err := exportHeader(info, maxTokens, t)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w, err := trace.NewWriter(f, h, text)
	if err != nil {
		return err
	}
	for k := range t.steps {
		s, ok := t.stepInfo(k)
		if !ok {
			return errDetailsNotKept
		}
		if err := w.Token(s); err != nil {
			return err
		}
	}
	return w.Flush()
}
