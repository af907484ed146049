package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"vkchat/runtime/engine"
	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// speedHistory is how many recent per-token speeds the sparkline keeps.
const speedHistory = 120

// runStats are the measurements of the latest generation.
type runStats struct {
	prefill   *engine.PrefillInfo
	ttft      time.Duration // 0 until the first token
	last      time.Duration // how long the latest token took
	decodeSum time.Duration // every token after the first
	decodeN   int
	speeds    []float64
	latencies []time.Duration         // recent decode times, first token excluded
	progress  *engine.PrefillProgress // the prompt being read, before EventPrefill
	generated int
	done      *engine.DoneInfo
}

// avg is the decode speed without the first token, which also pays for
// warm-up; the engine's own total is used once it has reported it.
func (r runStats) avg() float64 {
	if d := r.done; d != nil && d.Decode > 0 && d.Generated > 1 {
		return float64(d.Generated-1) / d.Decode.Seconds()
	}
	if r.decodeSum <= 0 {
		return 0
	}
	return float64(r.decodeN) / r.decodeSum.Seconds()
}

// applyEvent folds one engine event into the reply and the panels.
func (m *Model) applyEvent(g *generation, ev engine.Event) {
	m.stats = ev.Stats
	reply := g.reply
	switch ev.Kind {
	case engine.EventPrefillProgress:
		if ev.Progress != nil {
			p := *ev.Progress
			m.run.progress = &p
		}
	case engine.EventPrefill:
		if ev.Prefill == nil {
			return
		}
		p := *ev.Prefill
		m.run.prefill = &p
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
		t := *ev.Token
		reply.AppendToken(t)
		m.run.generated++
		m.run.last = t.Duration
		// The first token of this generation: a fork's starts past its
		// kept prefix, so its index is not 0.
		if m.run.generated == 1 {
			m.run.ttft = t.SinceStart
		} else {
			m.run.decodeSum += t.Duration
			m.run.decodeN++
			if t.Duration > 0 {
				m.run.speeds = append(m.run.speeds, 1/t.Duration.Seconds())
				m.run.latencies = append(m.run.latencies, t.Duration)
				if len(m.run.latencies) > latencyHistory {
					m.run.latencies = m.run.latencies[len(m.run.latencies)-latencyHistory:]
				}
				if len(m.run.speeds) > speedHistory {
					m.run.speeds = m.run.speeds[len(m.run.speeds)-speedHistory:]
				}
			}
		}
		if m.focus != focusTranscript {
			m.showStep(reply, len(reply.Steps)-1, false)
		}
	case engine.EventDone:
		if ev.Done == nil {
			return
		}
		d := *ev.Done
		m.run.done = &d
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
	r := m.run
	return panels.Metrics{
		Latencies:   r.latencies,
		Progress:    r.progress,
		Waiting:     m.waiting(),
		Load:        m.info.LoadTime,
		Prefill:     r.prefill,
		TTFT:        r.ttft,
		Last:        r.last,
		Avg:         r.avg(),
		Speeds:      r.speeds,
		Generated:   r.generated,
		ContextUsed: m.stats.ContextUsed,
		ContextSize: m.contextSize(),
	}
}
