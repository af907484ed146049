package engine

import (
	"time"

	"vkchat/runtime/sample"
)

// EventKind says which fields of an Event are set.
type EventKind int

const (
	// EventPrefill: the prompt has been processed; Prefill is set.
	EventPrefill EventKind = iota
	// EventToken: one token was sampled; Token is set.
	EventToken
	// EventDone: generation ended; Done is set.
	EventDone
	// EventPrefillProgress: a chunk of a long prompt has been processed;
	// Progress is set. Sent before EventPrefill, only for prompts longer
	// than one chunk.
	EventPrefillProgress
)

// Event is what the engine reports while it generates. Every event carries
// the current Stats so a consumer never has to ask for them.
type Event struct {
	Kind    EventKind
	Prefill *PrefillInfo
	Token   *TokenInfo
	Done    *DoneInfo
	// Progress is set on EventPrefillProgress.
	Progress *PrefillProgress
	Stats    Stats
}

// PrefillInfo describes the prompt pass.
type PrefillInfo struct {
	Tokens int // prompt tokens actually computed (after KV-cache reuse)
	Reused int // prompt tokens whose KV entries were reused from the previous turn
	// Reread counts the tokens, among Tokens, that were cached but had to
	// be read again: a hybrid model's recurrent state cannot be cut back,
	// so reusing a prefix restores the latest checkpoint before its end
	// and feeds the tokens after it (a fork, a regenerate, an edit).
	// RereadDuration is the time that took, part of Duration.
	Reread         int
	RereadDuration time.Duration
	// DroppedMessages counts the oldest messages after the system prompt
	// left out so the conversation fits the context.
	DroppedMessages int
	Duration        time.Duration
}

// TokenInfo describes one generated token.
type TokenInfo struct {
	ID    int32
	Piece string // text this token completes; may be "" while a UTF-8 character is incomplete
	// Candidates is the sampler's view of the distribution this token was
	// drawn from (see sample.Result).
	Candidates []sample.Candidate
	Entropy    float32
	Params     sample.Params // the settings it was drawn with
	Index      int           // 0 for the first generated token of the reply
	Duration   time.Duration // time to compute and sample this token
	// SinceStart is the time from the start of the request; for Index 0 it
	// is the time to first token.
	SinceStart time.Duration
	// Thinking marks a token of a thinking model's reasoning: its
	// <think>…</think> block, the tags included. Thought and Answer are the
	// piece split between that block and the reply proper, tags left out;
	// bytes that may begin a tag wait for the next token, and those still
	// waiting when the model ends its turn (at most a tag's length) are
	// shown in neither. Piece stays the raw text, which the conversation
	// keeps so the template decides what earlier reasoning the model sees.
	Thinking        bool
	Thought, Answer string
	// Funnel is what each stage of the sampler chain left at this step.
	Funnel sample.Funnel
	// LogProb is the natural log of this token's probability in the
	// model's distribution: the softmax of the logits, before penalties,
	// truncation and temperature. LogZ is the log normaliser of what the
	// sampler saw (after penalties): a candidate's log-probability there is
	// its Logit − LogZ, the model's own too when no penalty changed it.
	LogProb float64
	LogZ    float64
	// Top is set when penalties changed the distribution: the model's own
	// likeliest tokens with their log-probabilities, which Candidates (the
	// penalised ranking) then are not.
	Top []TokenLogprob
	// Forced: the caller chose this token (a fork) instead of the sampler.
	Forced bool
	// Experts is, for a mixture-of-experts model, where each layer routed
	// the position whose logits this token was drawn from (the token
	// before it, or the prompt's last): the experts that computed its
	// distribution. Nil for a dense model.
	Experts []Routing
	// Spec is what speculative decoding did at this token (drafted and
	// accepted, drafted and corrected, or the bonus of a round whose
	// drafts were all accepted); nil where no draft was verified.
	Spec *SpecMark
}

// Routing is where one layer sent one token: the experts it chose, most
// weight first, and their weights (summing to 1).
type Routing struct {
	Experts []int32
	Weights []float32
}

// StopReason says why generation ended.
type StopReason string

const (
	StopEOS       StopReason = "eos"        // the model ended its turn
	StopMaxTokens StopReason = "max-tokens" // the requested budget was reached
	StopCanceled  StopReason = "canceled"   // the caller canceled
	StopContext   StopReason = "context"    // the context window filled up
	StopSequence  StopReason = "stop"       // the answer reached one of Request.Stop
	StopError     StopReason = "error"
)

// DoneInfo ends a generation.
type DoneInfo struct {
	Reason StopReason
	// Stop is the stop string the answer reached (Reason StopSequence).
	// The tokens holding it were emitted; a caller showing the answer
	// cuts it from the stop string's last occurrence, as llama.cpp
	// leaves the stop string out of its reply.
	Stop      string `json:",omitempty"`
	Err       error
	Generated int
	Decode    time.Duration // total decode time, first token excluded
}

// Stats is a snapshot of the session's state.
type Stats struct {
	ContextUsed int // positions filled in the KV cache
	ContextSize int
	KVUsed      int64 // ContextUsed × KVPerToken, less what sliding-window layers no longer keep
	KVAllocated int64
	KVPerToken  int64
	Weights     int64
	// WeightsActive is what one token reads of the weights: for a
	// mixture-of-experts model all but the experts it is not routed to
	// (ActiveFormula says how that adds up); Weights for a dense one.
	WeightsActive int64
	ActiveFormula string
	Scratch       int64
	// A hybrid model's recurrent layers keep a state of StateBytes,
	// whatever the context length (StateFormula says how it adds up), and
	// the backend keeps copies of it at the Checkpoints positions, taking
	// CheckpointBytes; all zero for attention-only models, and the KV
	// figures above count attention layers only.
	StateBytes      int64
	StateFormula    string
	CheckpointBytes int64
	Checkpoints     []int
	// KVWindows are the sliding-window layers whose cache holds only their
	// window; nil when every layer holds the whole context.
	KVWindows []KVWindow
}

// KVWindow is a group of layers whose KV cache holds Window positions.
type KVWindow struct{ Layers, Window int }
