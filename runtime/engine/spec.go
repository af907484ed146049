package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"vkchat/runtime/backend"
	"vkchat/runtime/sample"
)

// Speculative decoding: a draft source proposes the next few tokens, the
// target reads the token it sampled and the drafts as one batch with
// logits at every row (a prefill of k+1 tokens, not k+1 decode steps),
// and the reply goes on through the rows for as long as the target's own
// draw at a row equals the draft there.
//
// The rule is llama.cpp's: each row is sampled by the session's sampler,
// exactly as a plain decode step would sample it (same settings,
// penalties over the same history, the same random stream, one draw a
// token), and a draft is accepted only when that draw equals it. So the
// reply is the one plain decoding gives, token for token, greedy or
// sampled with the same seed: speculation changes how fast it comes,
// never what comes. The first row whose draw differs gives the corrected
// token (the target's own), the drafts after it are dropped; a round
// whose drafts are all accepted ends with the last row's draw, a bonus
// token the drafts did not propose.
//
// Rollback: the KV cache needs none, the next Forward overwrites the
// rejected positions. A recurrent state (qwen35's DeltaNet, lfm2's short
// convolutions) cannot be cut back, so before a batch the engine saves a
// checkpoint at its start and, after a rejection, restores it and reads
// the accepted tokens again (a small batch). A snapshot after every row
// would make a rejection cheaper still, but the backends' batched
// recurrent kernels keep no state per row (docs/benchmarks.md,
// "2026-12-07: speculative rollback of a recurrent state (issue 42)").

// SpecMode names a draft source.
type SpecMode string

const (
	SpecOff   SpecMode = "off"
	SpecNgram SpecMode = "ngram" // n-gram lookup in the conversation so far
	SpecDraft SpecMode = "draft" // a smaller model with the same vocabulary (SpecOptions.Draft)
	SpecMTP   SpecMode = "mtp"   // the target's own multi-token-prediction head (qwen35, qwen35moe)
)

// SpecModes are the modes --spec and /spec take.
var SpecModes = []SpecMode{SpecOff, SpecNgram, SpecDraft, SpecMTP}

// DefaultSpecMax is the most tokens a round drafts when SpecOptions.Max
// is 0.
const DefaultSpecMax = 8

// SpecOptions configure speculative decoding.
type SpecOptions struct {
	Mode SpecMode // "" or SpecOff: none
	// Max is the most tokens one round drafts (0: DefaultSpecMax). The
	// length itself adapts to the recent acceptance (specLength).
	Max int
	// Draft is the draft model's file for SpecDraft.
	Draft string
}

// ParseSpecMode checks a --spec or /spec value.
func ParseSpecMode(s string) (SpecMode, error) {
	for _, m := range SpecModes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(SpecModes))
	for i, m := range SpecModes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown speculative mode %q (%s)", s, strings.Join(names, ", "))
}

// Draft is one proposed token and, when the source has one, the
// distribution it was drawn from (its likeliest tokens, for the
// inspector to show beside the target's).
type Draft struct {
	Token      int32
	Candidates []sample.Candidate
}

// Drafter is a draft source. The engine calls it from Generate only (never
// concurrently), in this order for each step of a reply: Observe for what
// the target read, then Propose; after a verification, Settle.
//
// A stateful source (a draft model, an MTP head with its own KV cache)
// keeps its state in step with the target through Observe and Settle. The
// MTP drafter (Qwen3.5/3.6 NextN) needs the target's final hidden state
// at each position it continues from: Observe hands it over as Hidden when
// the backend provides it (backend.HiddenBackend); for a verification the
// rows are those of the batch, and Settle says how many of them stay.
type Drafter interface {
	// Name is the source's mode ("ngram", "draft", "mtp").
	Name() string
	// Propose drafts up to n tokens to follow history: the conversation
	// so far (prompt and reply) ending with the token the target sampled
	// last, which the target has not read yet. Fewer, or none, is fine:
	// that step decodes plainly. history is read-only, valid during the
	// call.
	Propose(ctx context.Context, history []int32, n int) ([]Draft, error)
	// Observe: the target read tokens at positions pos, pos+1, ... (a
	// prompt, a decode step, a verification batch, tokens read again
	// after a rewind); whatever it held at positions >= pos before is
	// gone.
	Observe(tokens []int32, pos int, h Hidden)
	// Settle: after a verification the target keeps positions < keep;
	// the batch's rows from keep on were rejected drafts.
	Settle(keep int)
	Close() error
}

// Hidden is the target's final hidden state (after its last layer and
// the output norm, as backend.HiddenBackend hands it over) for the last Rows tokens of an Observe call, row-major,
// Rows × the embedding width; zero when the backend does not provide it.
type Hidden struct {
	Rows int
	Data []float32
}

// drafterFactory makes the drafter for a mode. The MTP drafter registers
// itself here (SpecMTP) from its own file.
type drafterFactory func(s *Session, o SpecOptions) (Drafter, error)

var (
	drafterMu        sync.Mutex
	drafterFactories = map[SpecMode]drafterFactory{}
)

// factoryOf is the factory of mode m's drafter, nil where none is
// registered.
func factoryOf(m SpecMode) drafterFactory {
	switch m {
	case SpecNgram:
		return func(*Session, SpecOptions) (Drafter, error) { return newNgramDrafter(), nil }
	case SpecDraft:
		return newModelDrafter
	}
	drafterMu.Lock()
	defer drafterMu.Unlock()
	return drafterFactories[m]
}

// registerDrafter adds the factory of a mode's drafter.
func registerDrafter(m SpecMode, f drafterFactory) {
	drafterMu.Lock()
	defer drafterMu.Unlock()
	drafterFactories[m] = f
}

// SetSpec switches speculative decoding to o; the next reply uses it. A
// mode whose source cannot be made (no draft file, a vocabulary mismatch,
// no MTP head) is refused with the reason and the old one kept.
func (s *Session) SetSpec(o SpecOptions) error {
	if o.Mode == "" {
		o.Mode = SpecOff
	}
	if _, err := ParseSpecMode(string(o.Mode)); err != nil {
		return err
	}
	if o.Max < 0 {
		return fmt.Errorf("--spec-max %d: want 0 (automatic) or more", o.Max)
	}
	var d Drafter
	if o.Mode != SpecOff {
		f := factoryOf(o.Mode)
		if f == nil {
			return fmt.Errorf("--spec %s: this build has no %s draft source", o.Mode, o.Mode)
		}
		var err error
		if d, err = f(s, o); err != nil {
			return fmt.Errorf("--spec %s: %w", o.Mode, err)
		}
	}
	s.genMu.Lock()
	old := s.drafter
	s.drafter, s.spec = d, o
	s.specLen = 0
	s.genMu.Unlock()
	if old != nil {
		return old.Close()
	}
	return nil
}

// Spec is the speculative decoding in use.
func (s *Session) Spec() SpecOptions {
	s.genMu.Lock()
	defer s.genMu.Unlock()
	if s.spec.Mode == "" {
		return SpecOptions{Mode: SpecOff}
	}
	return s.spec
}

// specMax is the most tokens a round may draft.
func (o SpecOptions) specMax() int {
	if o.Max > 0 {
		return o.Max
	}
	return DefaultSpecMax
}

// SpecFate is what speculation did at one token of a reply.
type SpecFate string

const (
	// FateAccepted: the token was drafted and the target drew the same.
	FateAccepted SpecFate = "accepted"
	// FateCorrected: a token was drafted here and the target drew
	// another, this one; SpecMark.Draft is the rejected draft.
	FateCorrected SpecFate = "corrected"
	// FateBonus: the last row of a round whose drafts were all accepted:
	// the target's own token, read in the same batch.
	FateBonus SpecFate = "bonus"
)

// SpecMark is the speculation at one token (TokenInfo.Spec): its fate,
// the draft at its position and the draft's distribution when the source
// has one, and the reply's running totals.
type SpecMark struct {
	Source string
	Fate   SpecFate
	Draft  int32 // the drafted token (FateAccepted: this token)
	// DraftCandidates is the draft source's distribution at this
	// position, nil when it has none (n-gram lookup).
	DraftCandidates []sample.Candidate
	Totals          SpecStats
}

// SpecStats counts a reply's speculation: Rounds verification batches,
// Drafted the drafts the reply reached (accepted or corrected; drafts
// after a rejected one, or past a reply's stop, count nowhere), Accepted
// of them kept, and Tokens the reply tokens those rounds gave (accepted,
// corrected and bonus).
type SpecStats struct {
	Rounds, Drafted, Accepted, Tokens int
}

// AcceptRate is Accepted/Drafted (0 with nothing drafted).
func (t SpecStats) AcceptRate() float64 {
	if t.Drafted == 0 {
		return 0
	}
	return float64(t.Accepted) / float64(t.Drafted)
}

// PerRound is the reply tokens one verification gave on average.
func (t SpecStats) PerRound() float64 {
	if t.Rounds == 0 {
		return 0
	}
	return float64(t.Tokens) / float64(t.Rounds)
}

// specRound is a verification in progress: batch (the sampled token and
// the drafts) read at start, its rows' logits, and at, the row the token
// being drawn now comes from.
type specRound struct {
	start  int
	batch  []int32
	drafts []Draft
	rows   [][]float32
	at     int
	active bool
	// saved: the checkpoint at start was taken for this round (none was
	// there), to drop once the round has settled.
	saved bool
}

// fate is the mark of token drawn from the round's current row.
func (r *specRound) fate(token int32) (SpecFate, *Draft) {
	if !r.active {
		return "", nil
	}
	if r.at == len(r.drafts) {
		return FateBonus, nil
	}
	d := &r.drafts[r.at]
	if d.Token == token {
		return FateAccepted, d
	}
	return FateCorrected, d
}

// specLength is the next round's draft length: back to one more than
// what the last round kept after a rejection, growing by two after a
// round whose drafts were all accepted, within [1, max].
func specLength(cur, drafted, accepted, mx int) int {
	if cur <= 0 {
		cur = mx
	}
	switch {
	case accepted == drafted:
		return min(cur+2, mx)
	default:
		return max(1, min(accepted+1, mx))
	}
}

// hidden reads the backend's hidden rows for a drafter (backend.HiddenBackend).
func (s *Session) hidden() Hidden {
	hb, ok := s.be.(backend.HiddenBackend)
	if !ok {
		return Hidden{}
	}
	rows, data := hb.LastHidden()
	return Hidden{Rows: rows, Data: data}
}

// observe tells the drafter the target read tokens at pos.
func (s *Session) observe(tokens []int32, pos int) {
	if s.drafter != nil && len(tokens) > 0 {
		s.drafter.Observe(tokens, pos, s.hidden())
	}
}

// verify starts a round: the target reads token (at pos) and drafts as
// one batch with every row's logits. A hybrid model's state is saved at
// pos first, for the rollback.
func (s *Session) verify(ctx context.Context, token int32, pos int, drafts []Draft) (specRound, error) {
	batch := make([]int32, 0, len(drafts)+1)
	batch = append(batch, token)
	for _, d := range drafts {
		batch = append(batch, d.Token)
	}
	saved := false
	if sb := s.stateBackend(); sb != nil {
		saved = !slices.Contains(sb.Checkpoints(), pos)
		s.checkpoint()
	}
	logits, err := s.forward(ctx, batch, pos, true)
	if err != nil {
		return specRound{}, err
	}
	vocab := len(logits) / len(batch)
	if vocab*len(batch) != len(logits) || vocab == 0 {
		return specRound{}, fmt.Errorf("verification: the %s backend returned %d logits for %d rows", s.be.Name(), len(logits), len(batch))
	}
	r := specRound{start: pos, batch: batch, drafts: drafts, active: true, saved: saved, rows: make([][]float32, len(batch))}
	for i := range batch {
		r.rows[i] = logits[i*vocab : (i+1)*vocab : (i+1)*vocab]
	}
	s.observe(batch, pos)
	return r, nil
}

// settled drops the checkpoint round r took at its start, unless it is
// the first for checkpointEvery positions (checkpoint.go: where a fork
// re-reads from; a speculative reply takes no other checkpoints on the
// way).
func (s *Session) settled(r *specRound) {
	if !r.saved {
		return
	}
	r.saved = false
	sb := s.stateBackend()
	d, ok := s.be.(backend.CheckpointDropper)
	if sb == nil || !ok {
		return
	}
	cps := sb.Checkpoints()
	if i := slices.Index(cps, r.start); i > 0 && r.start-cps[i-1] >= s.checkpointEvery || i == 0 {
		return
	}
	d.DropCheckpoint(r.start)
}

// rollback brings the target back to keep positions after a rejection in
// round r: the KV cache needs nothing; a recurrent state is restored from
// the checkpoint at the round's start and the accepted tokens are read
// again.
func (s *Session) rollback(ctx context.Context, r *specRound, keep int) error {
	if s.drafter != nil {
		s.drafter.Settle(keep)
	}
	if s.stateBackend() == nil {
		return nil
	}
	from := s.rewindState(keep)
	if from < r.start {
		return fmt.Errorf("speculative rollback: the checkpoint at %d is gone (the state went back to %d)", r.start, from)
	}
	if from < keep {
		if _, err := s.forward(ctx, r.batch[from-r.start:keep-r.start], from, false); err != nil {
			return fmt.Errorf("speculative rollback: read %d accepted tokens again: %w", keep-from, err)
		}
		s.observe(r.batch[from-r.start:keep-r.start], from)
	}
	s.settled(r)
	return nil
}
