package conversation

import (
	"math"
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
	// A speculative draft's fate at this token (engine.SpecFate): at most
	// one of these.
	stepSpecAccepted
	stepSpecCorrected
	stepSpecBonus
)

var specFlags = []struct {
	flag stepFlags
	fate engine.SpecFate
}{{stepSpecAccepted, engine.FateAccepted}, {stepSpecCorrected, engine.FateCorrected}, {stepSpecBonus, engine.FateBonus}}

// Step is one generated token of a reply and where its piece sits in the
// reply's text (content; for a thinking turn, the answer part of it).
type Step struct {
	Start, End int32
	ID         int32
	// Prob is the probability the token had in the distribution it was
	// drawn from (after penalties), 0 when it was not among the
	// candidates: the heatmap's colour.
	Prob    float32
	Entropy float32 // nats
	flags   stepFlags
	// LogProb is the token's natural-log probability in the model's own
	// distribution (engine.TokenInfo.LogProb).
	LogProb float64
}

func (s Step) Thinking() bool { return s.flags&stepThinking != 0 }
func (s Step) Forced() bool   { return s.flags&stepForced != 0 }

// Spec is what speculative decoding did at this token: accepted,
// corrected, bonus, or "" where no draft was verified.
func (s Step) Spec() engine.SpecFate {
	for _, f := range specFlags {
		if s.flags&f.flag != 0 {
			return f.fate
		}
	}
	return ""
}

// KeptCandidates bounds the candidates kept per token: the sampler lists
// what top-k considered, at most 40 (sample.Sampler's candidateCount),
// and the probability panel scrolls through all of them with the fork
// cursor, so all of those are kept; anything longer is cut here.
const KeptCandidates = 40

// turnDetail is the per-token detail of a reply, in flat arrays so a token
// costs no allocation of its own: stepDetail k belongs to step k, and its
// candidates and top tokens are ranges of cands and top.
type turnDetail struct {
	steps  []stepDetail
	cands  []sample.Candidate
	top    []engine.TokenLogprob
	params []sample.Params // each distinct setting in use, in order
	// route is each step's expert routing (a mixture-of-experts model;
	// nil for a dense one): routeN holds each layer's expert count, and
	// routeE and routeW the experts and weights of all layers in a row.
	// route may be shorter than steps: the steps past it route nowhere.
	route  []stepRoute
	routeN []uint8
	routeE []int32
	routeW []float32
	// spec is each step's draft (a speculative reply; nil otherwise, and
	// shorter than steps where the steps past it had none), its
	// candidates ranges of specCands; specSource is the draft source.
	spec       []stepSpec
	specCands  []sample.Candidate
	specSource string
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
	// text (ModelText) and its reasoning in the thinking block's text,
	// so a fork can cut a thinking reply's block at this token.
	rawEnd, textEnd int32
	params          uint16 // index into turnDetail.params
	candN, topN     uint8
}

// stepRoute is where one step's routing lies in turnDetail's arrays: its
// layers are routeN[layerOff:layerOff+layers], their experts start at
// routeE[off] (and routeW[off]).
type stepRoute struct {
	layerOff, off int32
	layers        uint16
}

// stepSpec is one step's draft: the token and where its distribution lies
// in turnDetail.specCands.
type stepSpec struct {
	draft   int32
	candOff int32
	candN   uint8
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
func (t *Turn) addStep(info engine.TokenInfo, start int) {
	s := Step{Start: int32(start), End: int32(len(t.Content)), ID: info.ID, Entropy: info.Entropy, LogProb: info.LogProb}
	for _, c := range info.Candidates {
		if c.ID == info.ID {
			s.Prob = c.Prob
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
	if m := info.Spec; m != nil {
		for _, f := range specFlags {
			if m.Fate == f.fate {
				s.flags |= f.flag
			}
		}
	}
	if t.detail == nil && len(t.Steps) == 0 {
		t.detail = &turnDetail{}
	}
	t.Steps = append(t.Steps, s)
	if d := t.detail; d != nil {
		d.add(info, int32(len(t.ModelText())), t.thinkTextLen())
	}
}

func (t *Turn) thinkTextLen() int32 {
	if t.Think == nil {
		return 0
	}
	return int32(len(t.Think.Text))
}

func (d *turnDetail) add(info engine.TokenInfo, rawEnd, textEnd int32) {
	cands := info.Candidates[:min(len(info.Candidates), KeptCandidates)]
	top := info.Top[:min(len(info.Top), KeptCandidates)]
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
	d.addRoute(info.Experts)
	d.addSpec(info.Spec)
	d.steps = append(d.steps, sd)
}

// addSpec records the draft of the step being added (before it joins
// d.steps). A reply without speculation records nothing.
func (d *turnDetail) addSpec(m *engine.SpecMark) {
	if m == nil && d.spec == nil {
		return
	}
	for len(d.spec) < len(d.steps) {
		d.spec = append(d.spec, stepSpec{})
	}
	var sp stepSpec
	if m != nil {
		d.specSource = m.Source
		cands := m.DraftCandidates[:min(len(m.DraftCandidates), KeptCandidates)]
		sp = stepSpec{draft: m.Draft, candOff: int32(len(d.specCands)), candN: uint8(len(cands))}
		d.specCands = append(d.specCands, cands...)
	}
	d.spec = append(d.spec, sp)
}

// addRoute records the routing of the step being added (before it joins
// d.steps). Dense models record nothing.
func (d *turnDetail) addRoute(experts []engine.Routing) {
	if len(experts) == 0 && d.route == nil {
		return
	}
	for len(d.route) < len(d.steps) {
		d.route = append(d.route, stepRoute{})
	}
	r := stepRoute{layerOff: int32(len(d.routeN)), off: int32(len(d.routeE)), layers: uint16(min(len(experts), math.MaxUint16))}
	for _, l := range experts[:r.layers] {
		n := min(len(l.Experts), len(l.Weights), math.MaxUint8)
		d.routeN = append(d.routeN, uint8(n))
		d.routeE = append(d.routeE, l.Experts[:n]...)
		d.routeW = append(d.routeW, l.Weights[:n]...)
	}
	d.route = append(d.route, r)
}

// routing rebuilds step k's routing; nil when it has none.
func (d *turnDetail) routing(k int) []engine.Routing {
	if k >= len(d.route) || d.route[k].layers == 0 {
		return nil
	}
	r := d.route[k]
	out := make([]engine.Routing, r.layers)
	off := r.off
	for i := range out {
		n := int32(d.routeN[r.layerOff+int32(i)])
		out[i] = engine.Routing{Experts: d.routeE[off : off+n : off+n], Weights: d.routeW[off : off+n : off+n]}
		off += n
	}
	return out
}

// Routing is step k's expert routing (engine.TokenInfo.Experts): nil for a
// dense model, and when the turn's detail was dropped.
func (t *Turn) Routing(k int) []engine.Routing {
	if k < 0 || k >= len(t.Steps) || !t.HasDetail() {
		return nil
	}
	return t.detail.routing(k)
}

// HasDetail reports whether the turn still has its per-token detail.
func (t *Turn) HasDetail() bool { return t.detail != nil && len(t.detail.steps) == len(t.Steps) }

// StepInfo rebuilds step k as the engine reported it. ok is false when the
// turn's detail was dropped: the result then has only what every step
// keeps (id, piece, entropy, log-probability, flags).
func (t *Turn) StepInfo(k int) (info engine.TokenInfo, ok bool) {
	if k < 0 || k >= len(t.Steps) {
		return engine.TokenInfo{}, false
	}
	s := t.Steps[k]
	answer := t.Content[min(int(s.Start), len(t.Content)):min(int(s.End), len(t.Content))]
	info = engine.TokenInfo{ID: s.ID, Piece: answer, Answer: answer, Entropy: s.Entropy, Index: k, Thinking: s.Thinking(),
		Forced: s.Forced(), LogProb: s.LogProb}
	if !t.HasDetail() {
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
	info.Experts = d.routing(k)
	if fate := s.Spec(); fate != "" {
		info.Spec = &engine.SpecMark{Source: d.specSource, Fate: fate}
		if k < len(d.spec) {
			sp := d.spec[k]
			info.Spec.Draft = sp.draft
			if sp.candN > 0 {
				info.Spec.DraftCandidates = d.specCands[sp.candOff : sp.candOff+int32(sp.candN) : sp.candOff+int32(sp.candN)]
			}
		}
	}
	rawStart, textStart := int32(0), int32(0)
	if k > 0 {
		rawStart, textStart = d.steps[k-1].rawEnd, d.steps[k-1].textEnd
	}
	if raw := t.ModelText(); int(sd.rawEnd) <= len(raw) && rawStart <= sd.rawEnd {
		info.Piece = raw[rawStart:sd.rawEnd]
	}
	if t.Think != nil && int(sd.textEnd) <= len(t.Think.Text) && textStart <= sd.textEnd {
		info.Thought = t.Think.Text[textStart:sd.textEnd]
	}
	return info, true
}

// Prefix is what a fork of t at step k keeps: the text, steps and detail
// before that step, a thinking reply's block cut where step k-1 left it.
// ok is false when t's detail was dropped (a fork needs the candidates).
func (t *Turn) Prefix(k int) (p Turn, ok bool) {
	if k < 0 || k > len(t.Steps) || !t.HasDetail() {
		return Turn{}, false
	}
	src := t.detail
	p.Steps = slices.Clone(t.Steps[:k])
	d := &turnDetail{steps: slices.Clone(src.steps[:k])}
	if k > 0 {
		last := src.steps[k-1]
		d.cands = slices.Clone(src.cands[:last.candOff+int32(last.candN)])
		d.top = slices.Clone(src.top[:last.topOff+int32(last.topN)])
		d.params = slices.Clone(src.params[:last.params+1])
		if n := min(k, len(src.route)); n > 0 {
			lastR := src.route[n-1]
			d.route = slices.Clone(src.route[:n])
			d.routeN = slices.Clone(src.routeN[:lastR.layerOff+int32(lastR.layers)])
			ends := int32(0)
			for _, c := range d.routeN {
				ends += int32(c)
			}
			d.routeE = slices.Clone(src.routeE[:ends])
			d.routeW = slices.Clone(src.routeW[:ends])
		}
		if n := min(k, len(src.spec)); n > 0 {
			last := src.spec[n-1]
			d.spec, d.specSource = slices.Clone(src.spec[:n]), src.specSource
			end := last.candOff + int32(last.candN)
			for _, sp := range d.spec {
				end = max(end, sp.candOff+int32(sp.candN))
			}
			d.specCands = slices.Clone(src.specCands[:end])
		}
	}
	p.detail = d
	thinking := false
	for _, s := range p.Steps {
		thinking = thinking || s.Thinking()
	}
	switch {
	case k == 0:
	case !thinking:
		p.Content = t.ModelText()[:src.steps[k-1].rawEnd]
	default:
		// The block opened at the first reasoning token; every step from
		// there on is in t.Think and t.Content.
		last, lastD := p.Steps[k-1], src.steps[k-1]
		b := &ThinkBlock{Raw: t.Think.Raw[:lastD.rawEnd], Text: t.Think.Text[:lastD.textEnd]}
		for j, s := range p.Steps {
			if s.Thinking() {
				b.Tokens++
				b.Dur += src.steps[j].dur
			}
		}
		b.Open = last.Thinking() && last.Start == last.End
		p.Think = b
		p.Content = t.Content[:last.End]
	}
	return p, true
}

// compact gives the arrays of a finished reply their exact size, so the
// growth slack of appending is not kept for the reply's lifetime.
func (t *Turn) compact() {
	d := t.detail
	if d == nil || d.compacted {
		return
	}
	d.compacted = true
	t.Steps = slices.Clone(t.Steps)
	d.steps = slices.Clone(d.steps)
	d.cands = slices.Clone(d.cands)
	if d.top != nil {
		d.top = slices.Clone(d.top)
	}
	if d.route != nil {
		d.route, d.routeN = slices.Clone(d.route), slices.Clone(d.routeN)
		d.routeE, d.routeW = slices.Clone(d.routeE), slices.Clone(d.routeW)
	}
	if d.spec != nil {
		d.spec, d.specCands = slices.Clone(d.spec), slices.Clone(d.specCands)
	}
}

// Detail retention: the newest DetailReplies replies generated in this
// session keep their per-token detail, older ones only while the kept
// detail stays within DetailTokens tokens; the reply being written always
// keeps its own. Branches count as the replies they are: a fork or a
// regenerated reply is the newest, and the alternative it replaced keeps
// its detail until newer replies push it out. An older reply keeps its
// text, token ids, entropy and chosen token's probabilities (heatmap,
// surprisal strip, token count); its candidates, funnel and settings go,
// so the inspector shows "details not kept" on it and it can no longer be
// forked or exported.
const (
	DetailReplies = 4
	DetailTokens  = 8192
)

// detailHistory is the replies that keep detail, oldest first.
type detailHistory struct{ turns []*Turn }

// add registers reply, about to be generated, as the newest and drops the
// detail of the replies that fall out of the bounds.
func (h *detailHistory) add(reply *Turn) {
	h.turns = slices.DeleteFunc(h.turns, func(t *Turn) bool { return t == reply || !t.HasDetail() })
	for _, t := range h.turns {
		if !t.Streaming {
			t.compact()
		}
	}
	h.turns = append(h.turns, reply)
	tokens := 0
	cut := 0
	for i := len(h.turns) - 1; i >= 0; i-- {
		t := h.turns[i]
		tokens += len(t.Steps)
		if i < len(h.turns)-1 && (len(h.turns)-i > DetailReplies || tokens > DetailTokens) {
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

// ThoughtSpan is where step k's reasoning lies in t.Think.Text, for the
// inspector to show the token it selected inside the thinking block. ok
// is false for a step outside the block, one that added no reasoning
// (the tags), or when the detail was dropped.
func (t *Turn) ThoughtSpan(k int) (start, end int, ok bool) {
	d := t.detail
	if t.Think == nil || d == nil || k < 0 || k >= len(t.Steps) || k >= len(d.steps) || !t.Steps[k].Thinking() {
		return 0, 0, false
	}
	if k > 0 {
		start = int(d.steps[k-1].textEnd)
	}
	end = int(d.steps[k].textEnd)
	if start >= end || end > len(t.Think.Text) {
		return 0, 0, false
	}
	return start, end, true
}
