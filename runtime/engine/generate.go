package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"vkchat/runtime/backend"
	"vkchat/runtime/sample"
)

// replyReserve is how many positions fitting a conversation leaves free for
// the reply when the request sets no budget.
func (s *Session) replyReserve(maxTokens int) int {
	r := s.ctxSize / 4
	if maxTokens > 0 {
		r = maxTokens
	}
	return min(r, s.ctxSize/2)
}

// Generate produces one reply, emitting events as it goes. It returns the
// error that ended generation early (also reported in the Done event), nil
// on a normal end or cancelation.
func (s *Session) Generate(ctx context.Context, req Request, emit func(Event)) error {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	start := time.Now()
	done := func(reason StopReason, err error, generated int, decode time.Duration) error {
		// The reply's end is a checkpoint too (checkpoint.go): the next
		// turn starts with this prompt and reply. Taken before the event,
		// so its figures count it.
		s.checkpoint()
		emit(Event{Kind: EventDone, Done: &DoneInfo{Reason: reason, Err: err, Generated: generated, Decode: decode}, Stats: s.Stats()})
		return err
	}
	if err := s.checkMapped(); err != nil {
		return done(StopError, err, 0, 0)
	}
	// The template is the model file's code: its render stops with ctx
	// (Esc, Ctrl+C) as well as at its limits.
	enc, dropped, err := s.fitRequestContext(ctx, req, s.replyReserve(req.MaxTokens))
	if err != nil {
		if ctx.Err() != nil {
			return done(StopCanceled, nil, 0, 0)
		}
		return done(StopError, err, 0, 0)
	}
	prompt := enc.ids
	base := 0 // reply tokens kept from before a fork point
	if f := req.Fork; f != nil {
		prompt = append(prompt, f.Prefix...)
		base = len(f.Prefix)
	}
	pf, err := s.prefill(ctx, prompt, func(p PrefillProgress) {
		emit(Event{Kind: EventPrefillProgress, Progress: &p, Stats: s.Stats()})
	})
	next := nextDist{logits: pf.logits, routing: s.routing()}
	if err != nil {
		if ctx.Err() != nil {
			return done(StopCanceled, nil, 0, 0)
		}
		return done(StopError, err, 0, 0)
	}
	s.observe(prompt[pf.reused:], pf.reused)
	emit(Event{Kind: EventPrefill, Prefill: &PrefillInfo{Tokens: len(prompt) - pf.reused, Reused: pf.reused,
		Reread: pf.reread, RereadDuration: pf.rereadTime,
		DroppedMessages: dropped, Duration: time.Since(start)}, Stats: s.Stats()})

	stream := s.tok.NewStream()
	// think tells the reasoning of a thinking model from its answer.
	think := enc.reasoning.Splitter(enc.thinkOpen)
	if f := req.Fork; f != nil {
		// The caller shows the prefix already; the stream only needs it so
		// a character split across the fork point comes out whole, and the
		// splitter so it knows whether the fork point is in the reasoning.
		for _, id := range f.Prefix {
			think.Add(stream.Add(id))
		}
	}
	stops := newStopMatcher(req.Stop)
	var decodeTime time.Duration
	// Each token is emitted as soon as it is sampled, before the forward pass
	// that feeds it back, so the screen never waits on the device. A token's
	// duration is the time since the previous one: that forward pass plus
	// sampling.
	stepStart := time.Now()
	var round specRound // the verification whose rows the reply is going through
	var spec SpecStats
	for i := 0; ; i++ {
		s.mu.Lock()
		if !next.batch && !s.logitsBatch {
			s.recycleLogits(s.logits, next.logits)
		}
		s.logits, s.head, s.logitsBatch = next.logits, next.head, next.batch
		s.history = append(s.history[:0], s.cached...)
		params := s.params
		var res sample.Result
		forced := i == 0 && req.Fork != nil
		if err = checkFinite(next, base+i, s.file.Path); err != nil {
			s.mu.Unlock()
			return done(StopError, err, i, decodeTime)
		}
		if forced {
			res, err = s.forceNext(next, req.Fork.Token)
		} else {
			res, err = s.sampleNext(next)
		}
		logp, top := s.modelLogprobs(res)
		s.mu.Unlock()
		if err != nil {
			return done(StopError, fmt.Errorf("sample: %w", err), i, decodeTime)
		}
		if s.tok.IsEOG(res.Token) {
			_ = stream.Flush()
			return done(StopEOS, nil, i, decodeTime)
		}
		last := req.MaxTokens > 0 && base+i+1 >= req.MaxTokens
		piece := stream.Add(res.Token)
		if last {
			piece += stream.Flush()
		}
		thought, answer, thinking := think.Add(piece)
		if last {
			ft, fa := think.Flush()
			thought, answer = thought+ft, answer+fa
		}
		dur := time.Since(stepStart)
		stepStart = time.Now()
		if i > 0 {
			decodeTime += dur
		}
		fate, draft := round.fate(res.Token)
		var mark *SpecMark
		if fate != "" {
			spec.Tokens++
			if fate != FateBonus {
				spec.Drafted++
			}
			if fate == FateAccepted {
				spec.Accepted++
			}
			mark = &SpecMark{Source: s.drafter.Name(), Fate: fate, Totals: spec}
			if draft != nil {
				mark.Draft, mark.DraftCandidates = draft.Token, draft.Candidates
			}
		}
		emit(Event{Kind: EventToken, Token: &TokenInfo{ID: res.Token, Piece: piece, Candidates: res.Candidates,
			Entropy: res.Entropy, Params: params, Index: base + i, Duration: dur, SinceStart: time.Since(start),
			Funnel: res.Funnel, LogProb: logp, LogZ: res.LogZ, Top: top, Forced: forced,
			Thinking: thinking, Thought: thought, Answer: answer, Experts: next.routing, Spec: mark}, Stats: s.Stats()})
		pos := len(s.cached)
		stop, stopped := stops.add(answer)
		switch {
		case stopped:
			s.checkpoint() // as done does
			d := &DoneInfo{Reason: StopSequence, Stop: stop, Generated: i + 1, Decode: decodeTime}
			emit(Event{Kind: EventDone, Done: d, Stats: s.Stats()})
			return nil
		case last:
			return done(StopMaxTokens, nil, i+1, decodeTime)
		case pos >= s.ctxSize:
			return done(StopContext, nil, i+1, decodeTime)
		case ctx.Err() != nil:
			return done(StopCanceled, nil, i+1, decodeTime)
		}
		if fate == FateAccepted {
			// The target read this token in the round's batch: its
			// next distribution is the round's next row.
			round.at++
			next = nextDist{logits: round.rows[round.at], batch: true}
			s.mu.Lock()
			s.cached = append(s.cached, res.Token)
			s.mu.Unlock()
			continue
		}
		if fate == FateCorrected || fate == FateBonus {
			s.specLen = specLength(s.specLen, len(round.drafts), round.at, s.spec.specMax())
		}
		switch fate {
		case FateCorrected:
			err = s.rollback(ctx, &round, pos)
		case FateBonus:
			s.settled(&round)
		}
		round.active = false
		if err == nil {
			left := s.ctxSize - pos - 1
			if req.MaxTokens > 0 {
				// no row past the reply's end: base+i+1 tokens are out
				left = min(left, req.MaxTokens-(base+i+1)-1)
			}
			next, round, err = s.advance(ctx, res.Token, pos, left, &spec)
		}
		if err != nil {
			switch {
			case errors.Is(err, backend.ErrContextFull):
				return done(StopContext, nil, i+1, decodeTime)
			case ctx.Err() != nil:
				return done(StopCanceled, nil, i+1, decodeTime)
			}
			return done(StopError, fmt.Errorf("decode: %w", err), i+1, decodeTime)
		}
		s.mu.Lock()
		s.cached = append(s.cached, res.Token)
		s.mu.Unlock()
		if (i+1)%s.checkpointEvery == 0 {
			s.checkpoint()
		}
	}
}

// recycleLogits hands the backend old, the logits a step is replacing
// with next, for a later Forward to fill (backend.Recycler), unless a
// Preview may still be reading it; s.mu held. Nothing else keeps a step's
// logits past its draw: the sampler works on its own copy, and what the
// events carry is computed from them.
func (s *Session) recycleLogits(old, next []float32) {
	r, ok := s.be.(backend.Recycler)
	if !ok || len(old) == 0 || s.previews > 0 || (len(next) > 0 && &old[0] == &next[0]) {
		return
	}
	r.Recycle(old)
}

// nextDist is what the next token is drawn from: the logits, or their head
// when the backend reduced them on its device.
type nextDist struct {
	logits  []float32
	head    *backend.Head
	routing []Routing // the experts of the pass that produced it (MoE models)
	// batch: logits is a row of a verification's batch (speculative
	// decoding), not a slice of its own to hand back to the backend.
	batch bool
}

// advance has the target read token at pos and returns the distribution
// after it: a decode step, or, when the drafter proposes tokens to follow
// it (at most left), a verification round whose first row that is.
func (s *Session) advance(ctx context.Context, token int32, pos, left int, st *SpecStats) (nextDist, specRound, error) {
	if s.drafter != nil {
		s.mu.Lock()
		history := append(s.cached[:len(s.cached):len(s.cached)], token)
		s.mu.Unlock()
		n := s.specLen
		if n == 0 {
			n = s.spec.specMax()
		}
		n = min(n, left)
		var drafts []Draft
		if n > 0 {
			var err error
			if drafts, err = s.drafter.Propose(ctx, history, n); err != nil {
				return nextDist{}, specRound{}, fmt.Errorf("%s draft: %w", s.drafter.Name(), err)
			}
		}
		if len(drafts) > n {
			drafts = drafts[:n]
		}
		if len(drafts) > 0 {
			r, err := s.verify(ctx, token, pos, drafts)
			if err != nil {
				return nextDist{}, specRound{}, err
			}
			st.Rounds++
			return nextDist{logits: r.rows[0], batch: true}, r, nil
		}
	}
	next, err := s.forwardNext(ctx, token, pos)
	if err == nil {
		s.observe([]int32{token}, pos)
	}
	return next, specRound{}, err
}

// routing copies the backend's routing of the last token it processed;
// nil for a dense model or a backend that does not report it.
func (s *Session) routing() []Routing {
	rb, ok := s.be.(backend.RoutingBackend)
	if !ok {
		return nil
	}
	last := rb.LastRouting()
	if last == nil {
		return nil
	}
	out := make([]Routing, len(last))
	for i, r := range last {
		out[i] = Routing{Experts: append([]int32(nil), r.Experts...), Weights: append([]float32(nil), r.Weights...)}
	}
	return out
}

// forwardNext runs the decode step for token at pos. A backend that can
// reduce the logits on its device returns only their head whenever the
// sampler settings allow (no penalties, top-k on), saving the read-back of
// the vocabulary; it asks for the most candidates the backend serves, so a
// settings change before the draw (the UI's keys) rarely needs more.
func (s *Session) forwardNext(ctx context.Context, token int32, pos int) (nextDist, error) {
	if hb, ok := s.be.(backend.HeadBackend); ok && hb.MaxHead() > 0 {
		s.mu.Lock()
		need := sample.HeadSize(s.params, []int32{token})
		s.mu.Unlock()
		if need > 0 && need <= hb.MaxHead() {
			h, ok, err := s.forwardHead(ctx, hb, []int32{token}, pos, hb.MaxHead())
			switch {
			case err != nil:
				return nextDist{}, err
			case ok:
				return nextDist{head: &h, routing: s.routing()}, nil
			}
			logits, err := hb.LastLogits(h.Seq)
			return nextDist{logits: logits, routing: s.routing()}, err
		}
	}
	logits, err := s.forward(ctx, []int32{token}, pos, false)
	return nextDist{logits: logits, routing: s.routing()}, err
}

// sampleNext draws from nd with s.mu held, fetching the whole logits when
// only the head was read and the settings now need more.
func (s *Session) sampleNext(nd nextDist) (sample.Result, error) {
	if nd.head != nil {
		if n := sample.HeadSize(s.params, s.history); n > 0 && n <= len(nd.head.IDs) {
			return s.sampler.SampleHead(sampleHead(nd.head)), nil
		}
		if err := s.wholeLogits(&nd); err != nil {
			return sample.Result{}, err
		}
	}
	return s.sampler.Sample(nd.logits, s.history), nil
}

// wholeLogits reads the step's whole logits into nd (and s.logits) when the
// backend returned only their head and the sampler needs more: a sampler
// setting past the head's size, or a forced token outside it.
func (s *Session) wholeLogits(nd *nextDist) error {
	hb, ok := s.be.(backend.HeadBackend)
	if !ok {
		return fmt.Errorf("the %s backend returned a head but cannot read its logits", s.be.Name())
	}
	logits, err := hb.LastLogits(nd.head.Seq)
	if err != nil {
		return err
	}
	s.logits, nd.logits = logits, logits
	return nil
}

func sampleHead(h *backend.Head) sample.Head {
	return sample.Head{IDs: h.IDs, Logits: h.Logits, Max: h.Max, Z: h.Z, Entropy: h.Entropy}
}

// prefilled is what prefill did: the logits after the last prompt token;
// the prompt tokens reused from the cache and so not computed; and, on a
// hybrid model, how many cached tokens had to be read again after the
// latest checkpoint (included in the computed ones) and how long that took.
type prefilled struct {
	logits     []float32
	reused     int
	reread     int
	rereadTime time.Duration
}

// prefill brings the KV cache (and a hybrid model's recurrent state) to
// hold prompt, reusing the longest prefix already cached, and returns the
// logits after the last prompt token.
func (s *Session) prefill(ctx context.Context, prompt []int32, progress func(PrefillProgress)) (prefilled, error) {
	if len(prompt) == 0 {
		return prefilled{}, fmt.Errorf("empty prompt")
	}
	s.mu.Lock()
	reuse := 0
	for reuse < len(s.cached) && reuse < len(prompt) && s.cached[reuse] == prompt[reuse] {
		reuse++
	}
	// The last prompt token is always recomputed: its logits are needed.
	reuse = min(reuse, len(prompt)-1)
	s.mu.Unlock()
	from := s.rewindState(reuse)
	s.mu.Lock()
	s.cached = s.cached[:from]
	s.mu.Unlock()
	pf := prefilled{reused: from, reread: reuse - from}
	var err error
	if pf.rereadTime, err = s.reread(ctx, prompt, from, reuse); err != nil {
		return pf, fmt.Errorf("read %d cached tokens again after the checkpoint at %d: %w", reuse-from, from, err)
	}
	if s.stateBackend() != nil {
		// Up to the last prompt token, a checkpoint, then that token
		// (checkpoint.go says why).
		if body := len(prompt) - 1; body > reuse {
			if _, err := s.forwardChunked(ctx, prompt[reuse:body], reuse, progress); err != nil {
				return pf, fmt.Errorf("prefill %d tokens: %w", body-reuse, err)
			}
		}
		s.mu.Lock()
		s.cached = append(s.cached[:0], prompt[:len(prompt)-1]...)
		s.mu.Unlock()
		s.checkpoint()
		reuse = len(prompt) - 1
	}
	pf.logits, err = s.forwardChunked(ctx, prompt[reuse:], reuse, progress)
	if err != nil {
		return pf, fmt.Errorf("prefill %d tokens: %w", len(prompt)-reuse, err)
	}
	s.mu.Lock()
	s.cached = append(s.cached[:reuse], prompt[reuse:]...)
	s.mu.Unlock()
	return pf, nil
}
