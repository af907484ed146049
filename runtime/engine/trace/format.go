package trace

import (
	"vkchat/runtime/chat"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// Header is the first line of an export. It holds what is needed to run
// the generation again and to check that it reproduces.
type Header struct {
	Type        string `json:"type"` // "header"
	Model       string `json:"model"`
	ModelSHA256 string `json:"model_sha256"`
	Backend     string `json:"backend"`
	Context     int    `json:"context"`
	// Prompt is the plain text of a completion (vkchat run); a chat
	// records Messages and the Template that rendered them instead.
	Prompt   string         `json:"prompt,omitempty"`
	Messages []chat.Message `json:"messages,omitempty"`
	Template string         `json:"template"` // "none" for plain completion
	// DisableThinking: the template was rendered with enable_thinking=false.
	DisableThinking bool `json:"disable_thinking,omitempty"`
	// ReasoningEffort: the template's reasoning_effort, when one was set.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	KVType          string `json:"kv_type,omitempty"`
	MaxTokens       int    `json:"max_tokens"`
	Params          Params `json:"params"`
	// SamplerState is the generator's state when the reply began, so a
	// reply that was not its session's first still replays exactly.
	SamplerState []byte `json:"sampler_state,omitempty"`
	Vkchat       string `json:"vkchat"`
}

// Params names the sampler settings in an export (and in a saved
// conversation, which uses the same keys).
type Params struct {
	Temperature      float32 `json:"temperature"`
	TopK             int     `json:"top_k"`
	TopP             float32 `json:"top_p"`
	MinP             float32 `json:"min_p"`
	RepeatPenalty    float32 `json:"repeat_penalty"`
	RepeatLastN      int     `json:"repeat_last_n"`
	PresencePenalty  float32 `json:"presence_penalty"`
	FrequencyPenalty float32 `json:"frequency_penalty"`
	Seed             uint64  `json:"seed"`
}

// ParamsOf converts sampler settings for an export.
func ParamsOf(p sample.Params) Params {
	return Params{p.Temperature, p.TopK, p.TopP, p.MinP, p.RepeatPenalty, p.RepeatLastN, p.PresencePenalty, p.FrequencyPenalty, p.Seed}
}

// Sample converts them back.
func (p Params) Sample() sample.Params {
	return sample.Params{Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, MinP: p.MinP, RepeatPenalty: p.RepeatPenalty,
		RepeatLastN: p.RepeatLastN, PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty, Seed: p.Seed}
}

// Token is one generated token with the most likely alternatives.
// Log-probabilities are natural logs of the model's distribution: the
// softmax of the logits before penalties, truncation and temperature.
type Token struct {
	Type    string  `json:"type"` // "token"
	Index   int     `json:"index"`
	ID      int32   `json:"id"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
	Forced  bool    `json:"forced,omitempty"` // chosen by the user (a fork), not drawn
	Top     []Alt   `json:"top"`
	// Params, when set, are the settings this token and the ones after it
	// were drawn with: they changed while the reply was generated.
	Params *Params `json:"params,omitempty"`
	// Experts, for a mixture-of-experts model, is per layer where the
	// position this token was drawn from was routed (engine.TokenInfo's
	// Experts); replay checks it.
	Experts []Routing `json:"experts,omitempty"`
	// Spec is what speculative decoding did at this token
	// (engine.TokenInfo's Spec); absent where no draft was verified.
	Spec *Spec `json:"spec,omitempty"`
}

// Spec is a token's draft fate: "accepted" (drafted, and the target drew
// the same), "corrected" (the target drew this token in place of the
// draft, DraftID) or "bonus" (the last row of a round whose drafts were
// all accepted), and the draft source ("ngram", "draft", "mtp").
type Spec struct {
	Source    string `json:"source"`
	Fate      string `json:"fate"`
	DraftID   *int32 `json:"draft_id,omitempty"`
	DraftText string `json:"draft_text,omitempty"`
}

// Lens is the logit lens at the position one generated token was drawn
// from, written after the tokens for the positions whose lens was read
// (the chat's /export --lens): Index is the token's, the rest is
// engine.LensPosition, the shape of vkchat eval --lens --json's
// positions (every layer's top [id, logit, probability]). Replay reads
// past it.
type Lens struct {
	Type  string `json:"type"` // "lens"
	Index int    `json:"index"`
	engine.LensPosition
}

// Routing is one layer's experts and their weights.
type Routing struct {
	IDs     []int32   `json:"ids"`
	Weights []float32 `json:"weights"`
}

// Alt is one of the most likely tokens at a step.
type Alt struct {
	ID      int32   `json:"id"`
	Text    string  `json:"text"`
	Logprob float64 `json:"logprob"`
}
