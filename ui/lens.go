package ui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/ui/conversation"
	"vkchat/ui/inspector"
	"vkchat/ui/prompt"
)

// The logit lens of an inspected token (ui/inspector draws it): here the
// tokens it is read at are put together and the engine is asked off the
// UI goroutine.

// lensStamp is what a computed lens depends on besides the position: the
// conversation's revision (a new chat, a branch switch), the model and
// its backend.
func (m *Model) lensStamp() string {
	return fmt.Sprintf("%d\x00%s\x00%s", m.conv.Rev(), m.info.Path, m.info.Backend)
}

// startLens computes the lens of step k of reply t: the distribution that
// step was drawn from, read at the last of the tokens before it (the
// reply's prompt as it was rendered, then its first k tokens). The engine
// runs in a goroutine the quit waits for, like a generation; the command
// only waits for its answer.
func (m *Model) startLens(t *conversation.Turn, k int, stamp string) (tea.Cmd, error) {
	if m.gen != nil {
		return nil, errors.New("lens: waits for the reply being written (esc stops it); ←/→ asks again")
	}
	if t.Export == nil {
		return nil, errors.New("lens: this reply's request was not kept, so its prompt cannot be read again")
	}
	r, ok := m.eng.(prompt.Renderer)
	if !ok {
		return nil, errors.New("lens: this engine cannot render the prompt the reply was read from")
	}
	req := t.Export.Req
	req.Fork = nil // the reply's steps carry a fork's kept prefix
	steps := make([]int32, k)
	for j := range steps {
		steps[j] = t.Steps[j].ID
	}
	vocab := m.info.Vocab
	ctx, cancel := context.WithCancel(m.baseCtx)
	eng, closed := m.eng, m.closed
	go func() {
		// A quit does not wait for a long lens (a big model reading a
		// whole prefix again): it stops it.
		select {
		case <-closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := make(chan inspector.LensMsg, 1)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		defer cancel()
		msg := inspector.LensMsg{Stamp: stamp, Turn: t, Step: k}
		defer func() {
			// A panicking engine must not take the chat down with it.
			if p := recover(); p != nil {
				msg.Pos, msg.Err = nil, fmt.Errorf("lens: engine panic: %v", p)
			}
			done <- msg
		}()
		rp, err := r.RenderPrompt(req)
		if err != nil {
			msg.Err = fmt.Errorf("lens: render the reply's prompt: %w", err)
			return
		}
		tokens := make([]int32, 0, len(rp.Tokens)+len(steps))
		for _, pt := range rp.Tokens {
			tokens = append(tokens, pt.ID)
		}
		tokens = append(tokens, steps...)
		for _, id := range tokens {
			if id < 0 || (vocab > 0 && int(id) >= vocab) {
				msg.Err = fmt.Errorf("lens: token %d is outside this model's vocabulary of %d: the reply was written by another model", id, vocab)
				return
			}
		}
		msg.Pos, msg.Err = eng.LensAt(ctx, tokens, inspector.LensK)
	}()
	return func() tea.Msg {
		select {
		case msg := <-done:
			return msg
		case <-closed:
			return nil
		}
	}, nil
}
