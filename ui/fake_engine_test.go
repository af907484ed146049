package ui

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// fakeEngine is a deterministic Engine: scripted replies, fixed durations,
// candidates with known logits, and a hold point to freeze a reply
// mid-stream for golden screens.
type fakeEngine struct {
	mu       sync.Mutex
	info     engine.ModelInfo
	params   sample.Params
	setCalls []sample.Params
	requests []engine.Request
	replies  [][]string
	nGen     int
	vocab    []string
	ids      map[string]int32
	last     []sample.Candidate // logits of the most recent step, for Preview
	lastID   int32
	stats    engine.Stats
	previews int

	holdAfter int           // >0: stop after this many tokens until release
	held      chan struct{} // closed when the hold point is reached
	release   chan struct{}
	dropped   int // PrefillInfo.DroppedMessages to report
	// reread is the PrefillInfo.Reread to report (a hybrid model's
	// rewind to a checkpoint), taking rereadTime
	reread     int
	rereadTime time.Duration
	doneErr    error // DoneInfo.Err to report after the tokens
	genErr     error // returned before any event
	panicMsg   string
	// progress is reported before the prefill event; with holdPrefill the
	// prompt then stays "being read" until release is closed.
	progress    []engine.PrefillProgress
	holdPrefill bool
	// route, when set, is the expert routing of the reply's token i (a
	// mixture-of-experts model).
	route func(i int) []engine.Routing
	// The logit lens (LensAt): the tokens of every call, an error to
	// return, and a hold that keeps it computing until closed.
	lensCalls [][]int32
	lensErr   error
	lensHold  chan struct{}
	// spec is the speculative decoding /spec set (specErr refuses it);
	// with a mode on, the reply's tokens carry fakeSpecMark's marks.
	spec    engine.SpecOptions
	specErr error
}

func (f *fakeEngine) Spec() engine.SpecOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.spec
}

func (f *fakeEngine) SetSpec(o engine.SpecOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.specErr != nil {
		return f.specErr
	}
	f.spec = o
	return nil
}

// fakeSpecMark is the speculation at token i of a reply (id drawn, alt the
// draft a corrected step had): from the second token on, rounds of two
// accepted drafts and a bonus, every third round ending in a correction
// instead; t counts.
func fakeSpecMark(src engine.SpecMode, i int, id, alt int32, t *engine.SpecStats) *engine.SpecMark {
	if i == 0 {
		return nil
	}
	m := &engine.SpecMark{Source: string(src), Draft: id}
	switch k := (i - 1) % 3; {
	case k < 2:
		m.Fate = engine.FateAccepted
		t.Drafted++
		t.Accepted++
	case ((i-1)/3)%3 == 2:
		m.Fate, m.Draft = engine.FateCorrected, alt
		t.Drafted++
		t.Rounds++
	default:
		m.Fate = engine.FateBonus
		t.Rounds++
	}
	t.Tokens++
	if src == engine.SpecDraft {
		m.DraftCandidates = []sample.Candidate{{ID: m.Draft, Prob: 0.6}, {ID: id, Prob: 0.3}}
	}
	m.Totals = *t
	return m
}

var fakeAlternatives = []string{" the", " a", "\n", ",", "\x1b]52;c;aGk=\x07"}

// fakeReplyCode is the first reply: prose, then a fenced code block with a
// tab, then prose, so golden screens show both wrapping styles.
var fakeReplyCode = []string{
	"Here", " is", " a", " tiny", " Go", " program", " that", " prints", " a", " greeting", ":", "\n\n",
	"```", "go", "\n", "func", " main", "()", " {", "\n", "\t", "println", "(\"", "hi", "\")", "\n", "}", "\n", "```", "\n\n",
	"It", " prints", " hi", ".",
}

var fakeReplyShort = []string{"Sure", "!", " Hello", " there", "."}

func newFakeEngine() *fakeEngine {
	f := &fakeEngine{
		info: engine.ModelInfo{
			Name: "tiny-test", Path: "/models/tiny-test.Q4_0.gguf", Arch: "llama", Params: 1_100_048_384,
			FileType: "Q4_0", ContextSize: 2048, TrainContext: 2048, Vocab: 32000, Layers: 22, KVHeads: 4,
			HeadDim: 64, KVType: "f16", TemplateName: "chatml", Backend: "vulkan", Device: "Fake GPU",
			LoadTime: 1500 * time.Millisecond,
		},
		params:  sample.Defaults(),
		replies: [][]string{fakeReplyCode, fakeReplyShort},
		ids:     map[string]int32{},
		held:    make(chan struct{}),
		release: make(chan struct{}),
	}
	for _, r := range f.replies {
		for _, p := range r {
			f.id(p)
		}
	}
	for _, p := range fakeAlternatives {
		f.id(p)
	}
	const perToken = 22 * 4 * 64 * 2 * 2
	f.stats = engine.Stats{ContextSize: 2048, KVPerToken: perToken, KVAllocated: 2048 * perToken, Weights: 637_534_208, Scratch: 12_582_912}
	return f
}

func (f *fakeEngine) id(piece string) int32 {
	if id, ok := f.ids[piece]; ok {
		return id
	}
	id := int32(len(f.vocab))
	f.vocab = append(f.vocab, piece)
	f.ids[piece] = id
	return id
}

func (f *fakeEngine) Info() engine.ModelInfo { return f.info }

func (f *fakeEngine) TokenText(id int32) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id < 0 || int(id) >= len(f.vocab) {
		return ""
	}
	return f.vocab[id]
}

func (f *fakeEngine) SetParams(p sample.Params) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.params = p
	f.setCalls = append(f.setCalls, p)
}

func (f *fakeEngine) Params() sample.Params {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.params
}

func (f *fakeEngine) Stats() engine.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats
}

func (f *fakeEngine) Preview(p sample.Params) (sample.Result, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.previews++
	if f.last == nil {
		return sample.Result{}, false
	}
	return rank(f.last, p), true
}

// stepCandidates is the distribution of step i whose sampled piece is
// chosen: the chosen token leads, except every fourth step where an
// alternative was likelier, so the sampled mark is not always on top.
func (f *fakeEngine) stepCandidates(i int, chosen int32) []sample.Candidate {
	var cs []sample.Candidate
	base := float32(6 - i%5)
	for k, alt := range fakeAlternatives {
		id := f.ids[alt]
		if id == chosen {
			continue
		}
		cs = append(cs, sample.Candidate{ID: id, Logit: base - 0.7*float32(k+1)})
	}
	lead := base
	if i%4 == 3 {
		lead = base - 0.5
	}
	cs = append(cs, sample.Candidate{ID: chosen, Logit: lead})
	return cs
}

// rank is a small sampler: softmax over the candidates plus a fixed tail,
// then top-k, top-p, min-p and temperature, like the real chain.
func rank(in []sample.Candidate, p sample.Params) sample.Result {
	cs := append([]sample.Candidate(nil), in...)
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].Logit > cs[b].Logit })
	const tail = 1.5 // probability mass of the rest of the vocabulary, in exp units
	z := tail
	for _, c := range cs {
		z += math.Exp(float64(c.Logit))
	}
	var h float64
	for i := range cs {
		pr := math.Exp(float64(cs[i].Logit)) / z
		cs[i].Prob = float32(pr)
		h -= pr * math.Log(pr)
		cs[i].Cut, cs[i].Final = false, 0
	}
	cum := float32(0)
	for i := range cs {
		cs[i].CutBy = sample.StageNone
		switch {
		case p.TopK > 0 && i >= p.TopK:
			cs[i].CutBy = sample.StageTopK
		case p.TopP < 1 && cum >= p.TopP && i > 0:
			cs[i].CutBy = sample.StageTopP
		case p.MinP > 0 && cs[i].Prob < p.MinP*cs[0].Prob:
			cs[i].CutBy = sample.StageMinP
		}
		cs[i].Cut = cs[i].CutBy != sample.StageNone
		cum += cs[i].Prob
	}
	temp := float64(p.Temperature)
	var zf float64
	for i := range cs {
		if cs[i].Cut {
			continue
		}
		if temp <= 0 {
			if i == 0 {
				zf = 1
			}
			continue
		}
		zf += math.Exp(float64(cs[i].Logit) / temp)
	}
	for i := range cs {
		switch {
		case cs[i].Cut:
		case temp <= 0:
			if i == 0 {
				cs[i].Final = 1
			}
		default:
			cs[i].Final = float32(math.Exp(float64(cs[i].Logit)/temp) / zf)
		}
	}
	return sample.Result{Token: cs[0].ID, Candidates: cs, Entropy: float32(h), Funnel: fakeFunnel(cs, p, cs[0].ID)}
}

// fakeFunnel counts the stages over the candidates, as if the rest of the
// 32000-token vocabulary had been cut by top-k.
func fakeFunnel(cs []sample.Candidate, p sample.Params, chosen int32) sample.Funnel {
	mass := func(n int) float64 {
		m := 0.0
		for _, c := range cs[:n] {
			m += float64(c.Prob)
		}
		return m
	}
	left := func(upTo sample.Stage) int {
		n := 0
		for _, c := range cs {
			if c.CutBy == sample.StageNone || c.CutBy > upTo {
				n++
			}
		}
		return n
	}
	k, tp, mp := left(sample.StageTopK), left(sample.StageTopP), left(sample.StageMinP)
	var draw float64
	for _, c := range cs {
		if c.ID == chosen {
			draw = float64(c.Prob)
		}
	}
	return sample.Funnel{
		{Stage: sample.StagePenalties, Left: 32000, Exact: true, Mass: 1},
		{Stage: sample.StageTopK, Left: k, Exact: true, Mass: mass(k), Active: p.TopK > 0},
		{Stage: sample.StageTopP, Left: tp, Exact: true, Mass: mass(tp), Active: p.TopP < 1},
		{Stage: sample.StageMinP, Left: mp, Exact: true, Mass: mass(mp), Active: p.MinP > 0},
		{Stage: sample.StageTemperature, Left: mp, Exact: true, Mass: mass(mp), Active: p.Temperature > 0},
		{Stage: sample.StageDraw, Left: 1, Exact: true, Mass: draw, Active: true},
	}
}

func (f *fakeEngine) Generate(ctx context.Context, req engine.Request, emit func(engine.Event)) error {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	if f.genErr != nil {
		err := f.genErr
		f.mu.Unlock()
		return err
	}
	if f.panicMsg != "" {
		msg := f.panicMsg
		f.mu.Unlock()
		panic(msg)
	}
	reply := f.replies[f.nGen%len(f.replies)]
	f.nGen++
	base := 0
	if fk := req.Fork; fk != nil {
		// A fork: the forced token, then the short reply, numbered on
		// from the kept prefix.
		reply = append([]string{f.vocab[fk.Token]}, fakeReplyShort...)
		base = len(fk.Prefix)
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += 4 + len(strings.Fields(m.Content))
	}
	stats := f.stats
	stats.ContextUsed = prompt
	stats.KVUsed = int64(prompt) * stats.KVPerToken
	f.stats = stats
	dropped, doneErr, holdAfter := f.dropped, f.doneErr, f.holdAfter
	reread, rereadTime := f.reread, f.rereadTime
	progress, holdPrefill := f.progress, f.holdPrefill
	f.mu.Unlock()
	for _, p := range progress {
		emit(engine.Event{Kind: engine.EventPrefillProgress, Stats: stats, Progress: &p})
	}
	if holdPrefill {
		close(f.held)
		select {
		case <-f.release:
		case <-ctx.Done():
			emit(engine.Event{Kind: engine.EventDone, Stats: stats, Done: &engine.DoneInfo{Reason: engine.StopCanceled}})
			return ctx.Err()
		}
	}

	const prefill = 120 * time.Millisecond
	pre := &engine.PrefillInfo{Tokens: prompt, DroppedMessages: dropped, Duration: prefill}
	if reread > 0 {
		// a rewind to a checkpoint: the cached tokens after it are read
		// again, with the last prompt token
		pre.Tokens, pre.Reused, pre.Reread, pre.RereadDuration = reread+1, prompt-reread-1, reread, rereadTime
	}
	emit(engine.Event{Kind: engine.EventPrefill, Stats: stats, Prefill: pre})

	since := prefill
	var decode time.Duration
	var specTotals engine.SpecStats
	n := 0
	canceled := func() error {
		emit(engine.Event{Kind: engine.EventDone, Stats: stats, Done: &engine.DoneInfo{Reason: engine.StopCanceled, Generated: n, Decode: decode}})
		return ctx.Err()
	}
	for i, piece := range reply {
		if holdAfter > 0 && i == holdAfter {
			close(f.held)
			select {
			case <-f.release:
			case <-ctx.Done():
				return canceled()
			}
		}
		if ctx.Err() != nil {
			return canceled()
		}
		f.mu.Lock()
		id := f.ids[piece]
		res := rank(f.stepCandidates(i, id), f.params)
		res.Funnel = fakeFunnel(res.Candidates, f.params, id)
		f.last = f.stepCandidates(i, id)
		f.lastID = id
		params := f.params
		var experts []engine.Routing
		if f.route != nil {
			experts = f.route(i)
		}
		var spec *engine.SpecMark
		if m := f.spec.Mode; m != "" && m != engine.SpecOff {
			alt := res.Candidates[min(1, len(res.Candidates)-1)].ID
			if alt == id {
				alt = res.Candidates[0].ID
			}
			spec = fakeSpecMark(m, i, id, alt, &specTotals)
		}
		stats.ContextUsed++
		stats.KVUsed = int64(stats.ContextUsed) * stats.KVPerToken
		f.stats = stats
		f.mu.Unlock()

		d := 40*time.Millisecond + time.Duration(i%3)*5*time.Millisecond
		if i == 0 {
			d = 50 * time.Millisecond
		} else {
			decode += d
		}
		since += d
		emit(engine.Event{Kind: engine.EventToken, Stats: stats, Token: &engine.TokenInfo{
			ID: id, Piece: piece, Candidates: res.Candidates, Entropy: res.Entropy, Params: params,
			Index: base + i, Duration: d, SinceStart: since, Funnel: res.Funnel, Forced: req.Fork != nil && i == 0,
			Experts: experts, Spec: spec,
		}})
		n++
	}
	done := &engine.DoneInfo{Reason: engine.StopEOS, Generated: n, Decode: decode}
	if doneErr != nil {
		done.Reason, done.Err = engine.StopError, doneErr
	}
	emit(engine.Event{Kind: engine.EventDone, Stats: stats, Done: done})
	if doneErr != nil {
		return doneErr
	}
	return nil
}

func (f *fakeEngine) lastRequest() engine.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return engine.Request{}
	}
	return f.requests[len(f.requests)-1]
}

func (f *fakeEngine) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

var errFake = errors.New("device lost (VK_ERROR_DEVICE_LOST)")

func (f *fakeEngine) previewCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.previews
}

func (f *fakeEngine) lastCandidates() []sample.Candidate {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

func (f *fakeEngine) setParamsCalls() []sample.Params {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sample.Params(nil), f.setCalls...)
}

// LensAt is a deterministic logit lens over the fake's 22 layers. Its
// answer is the scripted reply's next piece (the first reply's first
// piece after a prompt): the early
// layers repeat the input token with the answer climbing their ranks, and
// from a layer that depends on the position on they agree with it, each
// surer than the one before. lensErr fails it, lensHold (when set) keeps
// it computing until closed.
func (f *fakeEngine) LensAt(ctx context.Context, tokens []int32, k int) (*engine.LensPosition, error) {
	f.mu.Lock()
	f.lensCalls = append(f.lensCalls, append([]int32(nil), tokens...))
	err, hold := f.lensErr, f.lensHold
	vocab, layers := int32(len(f.vocab)), f.info.Layers
	last := int32(-1)
	if len(tokens) > 0 {
		last = tokens[len(tokens)-1]
	}
	// The answer is the scripted piece after the longest start of a
	// reply that the tokens end with.
	final, best := f.ids[f.replies[0][0]], 0
	for _, r := range f.replies {
		for i := len(r) - 1; i > best; i-- {
			if i > len(tokens) {
				continue
			}
			match := true
			for j, piece := range r[:i] {
				if tokens[len(tokens)-i+j] != f.ids[piece] {
					match = false
					break
				}
			}
			if match {
				final, best = f.ids[r[i]], i
				break
			}
		}
	}
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, errors.New("lens of no tokens")
	}
	turn := len(tokens) % layers
	p := &engine.LensPosition{Pos: len(tokens) - 1, Token: last}
	for l := range layers {
		ids := []int32{final}
		if l < turn {
			ids = []int32{last % vocab}
		}
		p1 := 0.35 + 0.6*float64(l)/float64(layers-1)
		ly := engine.LensLayer{Layer: l}
		for j := 0; len(ids) < min(k, int(vocab)); j++ {
			if l < turn && len(ids) == turn-l && !slices.Contains(ids, final) {
				ids = append(ids, final)
				continue
			}
			if id := (ids[0] + 1 + int32(j)) % vocab; !slices.Contains(ids, id) && (l >= turn || id != final) {
				ids = append(ids, id)
			}
		}
		for j, id := range ids {
			pr := p1
			if j > 0 {
				pr = (1 - p1) * math.Pow(0.5, float64(j))
			}
			ly.Top = append(ly.Top, [3]float64{float64(id), math.Log(pr), pr})
		}
		p.Layers = append(p.Layers, ly)
		p.Top1ByLayer = append(p.Top1ByLayer, ids[0])
	}
	p.SettleLayer = layers - 1
	for p.SettleLayer > 0 && p.Top1ByLayer[p.SettleLayer-1] == p.Top1ByLayer[layers-1] {
		p.SettleLayer--
	}
	return p, nil
}

// lensCallCount is how many times LensAt was called.
func (f *fakeEngine) lensCallCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.lensCalls)
}
