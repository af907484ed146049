package inspector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
)

// LensEngine is what reading a lens needs of the engine: the lens itself,
// and (asked for separately, since not every engine has it) the prompt a
// reply was read from, rendered again.
type LensEngine interface {
	LensAt(ctx context.Context, tokens []int32, k int) (*engine.LensPosition, error)
}

type promptRenderer interface {
	RenderPrompt(req engine.Request) (engine.RenderedPrompt, error)
}

// LensRead is one lens to read: step Step of reply Turn, the distribution
// that step was drawn from, read at the last of the tokens before it (the
// reply's prompt as it was rendered, then its first Step tokens).
type LensRead struct {
	Turn  *conversation.Turn
	Step  int
	Stamp string
	Vocab int // the model's vocabulary: a reply's tokens beyond it were another model's
}

// StartLens reads r on eng in a goroutine that wg counts (a quit waits for
// it) and that closed stops; the command only waits for its answer, a
// LensMsg.
func StartLens(base context.Context, closed <-chan struct{}, wg *sync.WaitGroup, eng LensEngine, r LensRead) (tea.Cmd, error) {
	t, k := r.Turn, r.Step
	if t.Export == nil {
		return nil, errors.New("lens: this reply's request was not kept, so its prompt cannot be read again")
	}
	rend, ok := eng.(promptRenderer)
	if !ok {
		return nil, errors.New("lens: this engine cannot render the prompt the reply was read from")
	}
	req := t.Export.Req
	req.Fork = nil // the reply's steps carry a fork's kept prefix
	steps := make([]int32, k)
	for j := range steps {
		steps[j] = t.Steps[j].ID
	}
	ctx, cancel := context.WithCancel(base)
	go func() {
		// A quit does not wait for a long lens (a big model reading a
		// whole prefix again): it stops it.
		select {
		case <-closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	done := make(chan LensMsg, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cancel()
		msg := LensMsg{Stamp: r.Stamp, Turn: t, Step: k}
		defer func() {
			// A panicking engine must not take the chat down with it.
			if p := recover(); p != nil {
				msg.Pos, msg.Err = nil, fmt.Errorf("lens: engine panic: %v", p)
			}
			done <- msg
		}()
		rp, err := rend.RenderPrompt(req)
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
			if id < 0 || (r.Vocab > 0 && int(id) >= r.Vocab) {
				msg.Err = fmt.Errorf("lens: token %d is outside this model's vocabulary of %d: the reply was written by another model", id, r.Vocab)
				return
			}
		}
		msg.Pos, msg.Err = eng.LensAt(ctx, tokens, LensK)
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
