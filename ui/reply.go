package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// applyEvent folds one engine event into the reply and the panels.
func (m *Model) applyEvent(g *generation, ev engine.Event) {
	m.stats = ev.Stats
	m.run.Fold(ev)
	reply := g.reply
	switch ev.Kind {
	case engine.EventPrefill:
		if ev.Prefill == nil {
			return
		}
		p := *ev.Prefill
		if p.DroppedMessages > 0 {
			reply.AddNote(conversation.NoteWarn, fmt.Sprintf("%d older %s left out so the conversation fits the %d-token context",
				p.DroppedMessages, plural(p.DroppedMessages, "message was", "messages were"), m.contextSize()), true)
		}
		if p.Reread > 0 {
			// A hybrid model's recurrent state cannot be cut back: reusing
			// the cache restored a checkpoint before the reused prefix.
			reply.AddNote(conversation.NoteInfo, fmt.Sprintf("re-read %d cached %s from the checkpoint at token %d in %s (a recurrent state cannot be cut back)",
				p.Reread, plural(p.Reread, "token", "tokens"), p.Reused, panels.Duration(p.RereadDuration)), true)
		}
	case engine.EventToken:
		if ev.Token == nil {
			return
		}
		reply.AppendToken(*ev.Token)
		if m.focus != focusTranscript {
			m.showStep(reply, len(reply.Steps)-1, false)
		}
	case engine.EventDone:
		if ev.Done == nil {
			return
		}
		d := *ev.Done
		reply.Done = &d
		switch {
		case d.Err != nil:
			g.doneErr = true
			m.reportError(reply, d.Err)
		case d.Reason == engine.StopError:
			g.doneErr = true
			m.reportError(reply, errors.New("generation failed"))
		case d.Reason == engine.StopCanceled:
			reply.SetEndNote(conversation.NoteInfo, "stopped")
		case d.Reason == engine.StopMaxTokens:
			// A fork's reply counts the tokens it kept from before the fork.
			reply.SetEndNote(conversation.NoteInfo, fmt.Sprintf("stopped at the %d-token limit", len(reply.Steps)))
		case d.Reason == engine.StopSequence:
			reply.CutAnswer(d.Stop)
			m.tr.Invalidate()
			reply.SetEndNote(conversation.NoteInfo, "stopped at "+termtext.Sanitize(strconv.Quote(d.Stop)))
		case d.Reason == engine.StopContext:
			// The next message still works: the engine leaves the oldest
			// turns out of its prompt to fit (PrefillInfo.DroppedMessages).
			reply.SetEndNote(conversation.NoteWarn, fmt.Sprintf("the reply filled the %d-token context and stopped; the next message leaves the oldest turns out to fit", m.contextSize()))
		}
	}
}

// reportError shows an engine error with the turn it spoiled and in the
// status line; the conversation itself is untouched.
func (m *Model) reportError(t *conversation.Turn, err error) {
	msg := termtext.Sanitize(err.Error())
	if errors.Is(err, engine.ErrDeviceLost) {
		msg += " — the conversation is kept; /backend cpu continues on the CPU"
	}
	t.AddNote(conversation.NoteError, "engine error: "+msg, false)
	m.setError("engine error: " + msg)
}

// finishGeneration runs when Generate has returned.
func (m *Model) finishGeneration(g *generation, err error) tea.Cmd {
	m.gen = nil
	reply := g.reply
	reply.Streaming = false
	if g.detached {
		return m.afterGeneration()
	}
	canceled := g.canceled && (err == nil || errors.Is(err, context.Canceled))
	if err != nil && !canceled && !g.doneErr {
		m.reportError(reply, err)
	}
	if reply.Content == "" && len(reply.Steps) == 0 {
		// Nothing was written: drop the empty reply but keep what was said
		// about it, on the turn before.
		m.removeTurn(reply)
		if prev := m.conv.Last(); prev != nil {
			prev.Notes = append(prev.Notes, reply.Notes...)
		}
	}
	if m.status.text == statusStopping || m.status.text == statusStoppingCtrlC {
		m.clearStatus()
	}
	m.saver.Save()
	return m.afterGeneration()
}

// afterGeneration starts a reply that was asked for while the previous one
// was still stopping.
func (m *Model) afterGeneration() tea.Cmd {
	if !m.pendingReply {
		return nil
	}
	m.pendingReply = false
	if last := m.conv.Last(); last == nil || (last.Role != "user" && !m.info.Completion) {
		return nil
	}
	return m.startGeneration()
}

func (m *Model) removeTurn(t *conversation.Turn) {
	m.conv.Remove(t)
	m.tr.Forget(t)
	if m.insp.Turn() == t {
		m.leaveInspector()
	}
}

// contextSize is the session's context window.
func (m *Model) contextSize() int {
	if m.stats.ContextSize > 0 {
		return m.stats.ContextSize
	}
	return m.info.ContextSize
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// metricsData is what the speed panel shows.
func (m *Model) metricsData() panels.Metrics {
	return m.run.Metrics(m.waiting(), m.info.LoadTime, m.stats.ContextUsed, m.contextSize())
}
