// Package tokenizer reproduces llama.cpp's tokenizers (llama-vocab.cpp) for
// GGUF vocabularies: SentencePiece-style ("llama") and byte-level BPE
// ("gpt2"), with llama.cpp's special-token handling and detokenization.
package tokenizer

import "slices"

// Token types as stored in tokenizer.ggml.token_type.
const (
	typeUndefined   = 0
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// attr mirrors llama_token_attr. A token can gain bits after loading: llama.cpp
// promotes end-of-generation and FIM tokens to control and gives some models'
// special tokens strip behaviour, and those bits decide how text is split.
type attr uint16

const (
	attrUndefined attr = 0
	attrUnknown   attr = 1 << (iota - 1)
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
	attrSingleWord
)

type kind int

const (
	kindSPM kind = iota
	kindBPE
)

type tokenData struct {
	text  string
	score float32
	attr  attr
	// markup marks chat markers that llama.cpp makes user-defined only so
	// that they print (gpt-oss's <|start|>, <|message|>, ...). llama.cpp
	// then also matches them in plain text; here they stay markup, matched
	// only where special tokens are parsed.
	markup bool
}

// Tokenizer encodes text to token ids and back. It is immutable after
// FromGGUF and safe for concurrent use.
type Tokenizer struct {
	kind   kind
	tokens []tokenData
	ids    map[string]int32
	pieces [][]byte // token_to_piece with special=true, for every id

	pre      *preTokenizer
	ranks    map[mergeKey]int32
	idRanks  map[uint64]mergeResult
	alphabet [0x144]int32 // token of each GPT-2 alphabet character, or -1
	maxLen   int

	bos, eos, eot, eom, unk, sep, pad int32
	eog                               map[int32]bool

	addBOS, addEOS   bool
	addSpacePrefix   bool
	ignoreMerges     bool
	escapeWhitespace bool

	// special lists the control, user-defined and unknown tokens, longest
	// text first: the order llama.cpp matches them in.
	special []int32
	// byteTok is llama.cpp's byte_to_token for SPM byte fallback; -1 where
	// the vocabulary has no way to spell that byte.
	byteTok [256]int32
}

type mergeKey struct{ a, b string }

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// BOS is the beginning-of-sequence id, -1 if the vocabulary has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence id, -1 if the vocabulary has none.
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn id, -1 if the vocabulary has none.
func (t *Tokenizer) EOT() int32 { return t.eot }

// AddBOS reports whether Encode with addSpecial prepends BOS; prompt
// builders use it to avoid a doubled BOS when a chat template prints one.
func (t *Tokenizer) AddBOS() bool { return t.addBOS }

// IsEOG reports whether generation should stop at id.
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// EOGs lists the end-of-generation ids in increasing order: llama.cpp's
// special_eog_ids (eos, eot, eom, the FIM pad/repo/separator tokens and
// the tokens it recognises by text such as <|im_end|> and <end_of_turn>).
func (t *Tokenizer) EOGs() []int32 {
	ids := make([]int32, 0, len(t.eog))
	for id := range t.eog {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// IsControl reports whether id is a control token (including tokens llama.cpp
// promotes to control, such as end-of-generation markers).
func (t *Tokenizer) IsControl(id int32) bool {
	return t.valid(id) && t.tokens[id].attr&attrControl != 0
}

// IsSpecial reports whether id is a token special-token parsing matches
// whole: control and user-defined tokens (chat markup such as <|im_start|>,
// and Qwen3's <think>, which is user-defined).
func (t *Tokenizer) IsSpecial(id int32) bool {
	return t.valid(id) && t.tokens[id].attr&(attrControl|attrUserDefined) != 0
}

// TokenText is the token's text as stored in the vocabulary ("" if id is out
// of range).
func (t *Tokenizer) TokenText(id int32) string {
	if !t.valid(id) {
		return ""
	}
	return t.tokens[id].text
}

// TokenID looks a token up by its vocabulary text.
func (t *Tokenizer) TokenID(text string) (int32, bool) {
	id, ok := t.ids[text]
	return id, ok
}

func (t *Tokenizer) valid(id int32) bool { return id >= 0 && int(id) < len(t.tokens) }

func (t *Tokenizer) lookup(s string) int32 {
	if id, ok := t.ids[s]; ok {
		return id
	}
	return -1
}
