package ui

import (
	"slices"
	"time"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// A reply keeps two things per generated token. Its step (32 bytes) is kept
// for every token of every reply: the token, where its text is, its
// probability, entropy and log-probability, which the transcript, the
// heatmap and the surprisal strip need. Its detail (the candidate list, the
// sampler funnel, the settings, the model's own top tokens) is what the
// inspector, a fork and /export need; it is about 1 KB a token, so only
// the newest replies keep it (see detailHistory) and older ones drop it.

// stepFlags are a step's yes/no facts.
type stepFlags uint8

const (
	stepThinking stepFlags = 1 << iota // part of a thinking model's reasoning block
	stepForced                         // chosen by the user (a fork), not drawn
	stepLogZ                           // logprob is the engine's exact figure
)

// step is one generated token of a reply and where its piece sits in the
// reply's text (content; for a thinking turn, the answer part of it).
type step struct {
	start, end int32
	id         int32
	// prob is the probability the token had in the distribution it was
	// drawn from (after penalties), 0 when it was not among the
	// candidates: the heatmap's colour.
	prob    float32
	entropy float32 // nats
	flags   stepFlags
	// logprob is the token's natural-log probability in the model's own
	// distribution (engine.TokenInfo.LogProb).
	logprob float64
}

func (s step) thinking() bool { return s.flags&stepThinking != 0 }
func (s step) forced() bool   { return s.flags&stepForced != 0 }

// keptCandidates bounds the candidates kept per token: the sampler lists
// what top-k considered, at most 40 (sample.Sampler's candidateCount),
// and the probability panel scrolls through all of them with the fork
// cursor, so all of those are kept; anything longer is cut here.
const keptCandidates = 40

// turnDetail is the per-token detail of a reply, in flat arrays so a token
// costs no allocation of its own: stepDetail k belongs to step k, and its
// candidates and top tokens are ranges of cands and top.
type turnDetail struct {
	steps  []stepDetail
	cands  []sample.Candidate
	top    []engine.TokenLogprob
	params []sample.Params // each distinct setting in use, in order
	// compacted: the reply is finished and its arrays have their size.
	compacted bool
}

// stepDetail is one token's detail; ~140 bytes besides its candidates.
type stepDetail struct {
	logZ      float64
	dur       time.Duration
	funnel    [len(sample.Funnel{})]funnelStage
	penalized int32 // tokens the penalties stage pushed down
	candOff   int32
	topOff    int32
	index     int32
	// rawEnd and textEnd are where the token's piece ends in the model's
	// text (modelText) and its reasoning in the thinking block's text,
	// so a fork can cut a thinking reply's block at this token.
	rawEnd, textEnd int32
	params          uint16 // index into turnDetail.params
	candN, topN     uint8
}

// funnelStage is sample.FunnelStage without its padding.
type funnelStage struct {
	mass          float64
	left          int32
	stage         sample.Stage
	exact, active bool
}

// addStep records the token just appended to the turn's text, its piece
// at content[start:]. A reply records detail from its first token; a turn
// that has steps but no detail (an old reply whose detail was dropped)
// never gets any back.
func (t *turn) addStep(info engine.TokenInfo, start int) {
	s := step{start: int32(start), end: int32(len(t.content)), id: info.ID, entropy: info.Entropy, logprob: info.LogProb}
	for _, c := range info.Candidates {
		if c.ID == info.ID {
			s.prob = c.Prob
			break
		}
	}
	if info.Thinking {
		s.flags |= stepThinking
	}
	if info.Forced {
		s.flags |= stepForced
	}
	if info.LogZ != 0 {
		s.flags |= stepLogZ
	}
	if t.detail == nil && len(t.steps) == 0 {
		t.detail = &turnDetail{}
	}
	t.steps = append(t.steps, s)
	if d := t.detail; d != nil {
		d.add(info, int32(len(t.modelText())), t.thinkTextLen())
	}
}

func (t *turn) thinkTextLen() int32 {
	if t.think == nil {
		return 0
	}
	return int32(len(t.think.text))
}

func (d *turnDetail) add(info engine.TokenInfo, rawEnd, textEnd int32) {
	cands := info.Candidates[:min(len(info.Candidates), keptCandidates)]
	top := info.Top[:min(len(info.Top), keptCandidates)]
	sd := stepDetail{logZ: info.LogZ, dur: info.Duration, candOff: int32(len(d.cands)), topOff: int32(len(d.top)),
		index: int32(info.Index), rawEnd: rawEnd, textEnd: textEnd, candN: uint8(len(cands)), topN: uint8(len(top))}
	for i, f := range info.Funnel {
		sd.funnel[i] = funnelStage{mass: f.Mass, left: int32(f.Left), stage: f.Stage, exact: f.Exact, active: f.Active}
		sd.penalized += int32(f.Penalized)
	}
	if n := len(d.params); n == 0 || d.params[n-1] != info.Params {
		d.params = append(d.params, info.Params)
	}
	sd.params = uint16(len(d.params) - 1)
	d.cands = append(d.cands, cands...)
	// A nil Top (no penalties) stays nil: the export then takes the
	// candidates, as trace.TokenOf does.
	if info.Top != nil {
		d.top = append(d.top, top...)
	}
	d.steps = append(d.steps, sd)
}

// hasDetail reports whether the turn still has its per-token detail.
func (t *turn) hasDetail() bool { return t.detail != nil && len(t.detail.steps) == len(t.steps) }

// stepInfo rebuilds step k as the engine reported it. ok is false when the
// turn's detail was dropped: the result then has only what every step
// keeps (id, piece, entropy, log-probability, flags).
func (t *turn) stepInfo(k int) (info engine.TokenInfo, ok bool) {
	if k < 0 || k >= len(t.steps) {
		return engine.TokenInfo{}, false
	}
	s := t.steps[k]
	answer := t.content[min(int(s.start), len(t.content)):min(int(s.end), len(t.content))]
	info = engine.TokenInfo{ID: s.id, Piece: answer, Answer: answer, Entropy: s.entropy, Index: k, Thinking: s.thinking(),
		Forced: s.forced(), LogProb: s.logprob}
	if !t.hasDetail() {
		return info, false
	}
	d := t.detail
	sd := d.steps[k]
	info.Index, info.Duration, info.LogZ = int(sd.index), sd.dur, sd.logZ
	info.Params = d.params[sd.params]
	info.Candidates = d.cands[sd.candOff : sd.candOff+int32(sd.candN) : sd.candOff+int32(sd.candN)]
	if sd.topN > 0 {
		info.Top = d.top[sd.topOff : sd.topOff+int32(sd.topN) : sd.topOff+int32(sd.topN)]
	}
	for i, f := range sd.funnel {
		info.Funnel[i] = sample.FunnelStage{Stage: f.stage, Left: int(f.left), Exact: f.exact, Mass: f.mass, Active: f.active}
	}
	info.Funnel[0].Penalized = int(sd.penalized)
	rawStart, textStart := int32(0), int32(0)
	if k > 0 {
		rawStart, textStart = d.steps[k-1].rawEnd, d.steps[k-1].textEnd
	}
	if raw := t.modelText(); int(sd.rawEnd) <= len(raw) && rawStart <= sd.rawEnd {
		info.Piece = raw[rawStart:sd.rawEnd]
	}
	if t.think != nil && int(sd.textEnd) <= len(t.think.text) && textStart <= sd.textEnd {
		info.Thought = t.think.text[textStart:sd.textEnd]
	}
	return info, true
}

// prefix is what a fork of t at step k keeps: the text, steps and detail
// before that step, a thinking reply's block cut where step k-1 left it.
// ok is false when t's detail was dropped (a fork needs the candidates).
func (t *turn) prefix(k int) (p turn, ok bool) {
	if k < 0 || k > len(t.steps) || !t.hasDetail() {
		return turn{}, false
	}
	src := t.detail
	p.steps = slices.Clone(t.steps[:k])
	d := &turnDetail{steps: slices.Clone(src.steps[:k])}
	if k > 0 {
		last := src.steps[k-1]
		d.cands = slices.Clone(src.cands[:last.candOff+int32(last.candN)])
		d.top = slices.Clone(src.top[:last.topOff+int32(last.topN)])
		d.params = slices.Clone(src.params[:last.params+1])
	}
	p.detail = d
	thinking := false
	for _, s := range p.steps {
		thinking = thinking || s.thinking()
	}
	switch {
	case k == 0:
	case !thinking:
		p.content = t.modelText()[:src.steps[k-1].rawEnd]
	default:
		// The block opened at the first reasoning token; every step from
		// there on is in t.think and t.content.
		last, lastD := p.steps[k-1], src.steps[k-1]
		b := &thinkBlock{raw: t.think.raw[:lastD.rawEnd], text: t.think.text[:lastD.textEnd]}
		for j, s := range p.steps {
			if s.thinking() {
				b.tokens++
				b.dur += src.steps[j].dur
			}
		}
		b.open = last.thinking() && last.start == last.end
		p.think = b
		p.content = t.content[:last.end]
	}
	return p, true
}

// compact gives the arrays of a finished reply their exact size, so the
// growth slack of appending is not kept for the reply's lifetime.
func (t *turn) compact() {
	d := t.detail
	if d == nil || d.compacted {
		return
	}
	d.compacted = true
	t.steps = slices.Clone(t.steps)
	d.steps = slices.Clone(d.steps)
	d.cands = slices.Clone(d.cands)
	if d.top != nil {
		d.top = slices.Clone(d.top)
	}
}

// Detail retention: the newest detailReplies replies generated in this
// session keep their per-token detail, older ones only while the kept
// detail stays within detailTokens tokens; the reply being written always
// keeps its own. Branches count as the replies they are: a fork or a
// regenerated reply is the newest, and the alternative it replaced keeps
// its detail until newer replies push it out. An older reply keeps its
// text, token ids, entropy and chosen token's probabilities (heatmap,
// surprisal strip, token count); its candidates, funnel and settings go,
// so the inspector shows "details not kept" on it and it can no longer be
// forked or exported.
const (
	detailReplies = 4
	detailTokens  = 8192
)

// detailHistory is the replies that keep detail, oldest first.
type detailHistory struct{ turns []*turn }

// add registers reply, about to be generated, as the newest and drops the
// detail of the replies that fall out of the bounds.
func (h *detailHistory) add(reply *turn) {
	h.turns = slices.DeleteFunc(h.turns, func(t *turn) bool { return t == reply || !t.hasDetail() })
	for _, t := range h.turns {
		if !t.streaming {
			t.compact()
		}
	}
	h.turns = append(h.turns, reply)
	tokens := 0
	cut := 0
	for i := len(h.turns) - 1; i >= 0; i-- {
		t := h.turns[i]
		tokens += len(t.steps)
		if i < len(h.turns)-1 && (len(h.turns)-i > detailReplies || tokens > detailTokens) {
			cut = i + 1
			break
		}
	}
	for _, t := range h.turns[:cut] {
		t.detail = nil
	}
	h.turns = slices.Delete(h.turns, 0, cut)
}

// reset forgets every reply (a new chat, a loaded one).
func (h *detailHistory) reset() { h.turns = nil }
