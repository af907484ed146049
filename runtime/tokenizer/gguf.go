package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"vkchat/runtime/gguf"
)

const (
	keyModel       = "tokenizer.ggml.model"
	keyPre         = "tokenizer.ggml.pre"
	keyTokens      = "tokenizer.ggml.tokens"
	keyScores      = "tokenizer.ggml.scores"
	keyTokenType   = "tokenizer.ggml.token_type"
	keyMerges      = "tokenizer.ggml.merges"
	keyAddBOS      = "tokenizer.ggml.add_bos_token"
	keyAddEOS      = "tokenizer.ggml.add_eos_token"
	keyAddSep      = "tokenizer.ggml.add_sep_token"
	keyAddPrefix   = "tokenizer.ggml.add_space_prefix"
	keyBOS         = "tokenizer.ggml.bos_token_id"
	keyEOS         = "tokenizer.ggml.eos_token_id"
	keyEOT         = "tokenizer.ggml.eot_token_id"
	keyEOM         = "tokenizer.ggml.eom_token_id"
	keyUNK         = "tokenizer.ggml.unknown_token_id"
	keySEP         = "tokenizer.ggml.seperator_token_id" // sic, as gguf-py spells it
	keyPAD         = "tokenizer.ggml.padding_token_id"
	keyMask        = "tokenizer.ggml.mask_token_id"
	keyFIMPre      = "tokenizer.ggml.fim_pre_token_id"
	keyFIMSuf      = "tokenizer.ggml.fim_suf_token_id"
	keyFIMMid      = "tokenizer.ggml.fim_mid_token_id"
	keyFIMPad      = "tokenizer.ggml.fim_pad_token_id"
	keyFIMRep      = "tokenizer.ggml.fim_rep_token_id"
	keyFIMSep      = "tokenizer.ggml.fim_sep_token_id"
	keyPrefixOld   = "tokenizer.ggml.prefix_token_id"
	keySuffixOld   = "tokenizer.ggml.suffix_token_id"
	keyMiddleOld   = "tokenizer.ggml.middle_token_id"
	keyGeneralName = "general.name"
	keyGeneralArch = "general.architecture"
)

// ErrVocab is wrapped by every FromGGUF error about the tokenizer metadata.
var ErrVocab = errors.New("invalid tokenizer metadata")

// metaErr wraps an error from the gguf accessors, which already name the file
// and key.
func metaErr(err error) error { return fmt.Errorf("%w: %w", ErrVocab, err) }

func vocabErr(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrVocab, key, fmt.Sprintf(format, args...))
}

// FromGGUF builds the tokenizer from tokenizer.ggml.* metadata, applying
// llama.cpp's defaults and its per-model fix-ups.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	if f == nil {
		return nil, fmt.Errorf("%w: no file", ErrVocab)
	}
	model, ok, err := f.String(keyModel)
	if err != nil {
		return nil, metaErr(err)
	}
	if !ok {
		return nil, vocabErr(keyModel, "missing")
	}
	t := &Tokenizer{eot: -1, eom: -1, sep: -1, pad: -1, escapeWhitespace: true}
	var ids specialIDs
	ids.init()
	var pre preConfig
	switch model {
	case "llama":
		t.kind = kindSPM
		ids.bos, ids.eos, ids.unk = 1, 2, 0
		t.addSpacePrefix, t.addBOS = true, true
	case "gpt2":
		t.kind = kindBPE
		// llama.cpp's BPE defaults; 11 is its historical guess at a BOS/EOS.
		ids.bos, ids.eos = 11, 11
		t.escapeWhitespace = false
		name, ok, err := f.String(keyPre)
		if err != nil {
			return nil, metaErr(err)
		}
		if !ok || name == "" {
			name = "default"
		}
		pre, ok = preTypes[name]
		if !ok {
			return nil, vocabErr(keyPre, "unknown pre-tokenizer %q; supported: %s", name, supportedPre())
		}
		if pre.noBOS {
			ids.bos = -1
		}
		t.ignoreMerges, t.addBOS = pre.ignoreMerges, pre.addBOS
		if t.pre, err = newPreTokenizer(name, pre.regexes); err != nil {
			return nil, err
		}
	default:
		return nil, vocabErr(keyModel, "unknown tokenizer model %q; supported: llama (SentencePiece), gpt2 (byte-level BPE)", model)
	}
	if err := optBool(f, keyAddPrefix, &t.addSpacePrefix); err != nil {
		return nil, err
	}

	if err := t.loadTokens(f); err != nil {
		return nil, err
	}
	if t.kind == kindBPE {
		if err := t.loadMerges(f); err != nil {
			return nil, err
		}
	}
	if err := t.loadSpecial(f, &ids); err != nil {
		return nil, err
	}
	t.finish(f)
	return t, nil
}

func optBool(f *gguf.File, key string, dst *bool) error {
	v, ok, err := f.Bool(key)
	if err != nil {
		return metaErr(err)
	}
	if ok {
		*dst = v
	}
	return nil
}

func (t *Tokenizer) loadTokens(f *gguf.File) error {
	arr, ok, err := f.Array(keyTokens)
	if err != nil {
		return metaErr(err)
	}
	if !ok {
		return vocabErr(keyTokens, "missing")
	}
	texts, isStr := arr.Values.([]string)
	if !isStr {
		return vocabErr(keyTokens, "must be an array of strings, found an array of %s", arr.Elem)
	}
	n := len(texts)
	if n == 0 {
		return vocabErr(keyTokens, "empty vocabulary")
	}
	if n > 1<<31-1 {
		return vocabErr(keyTokens, "%d tokens do not fit int32 ids", n)
	}

	var scores []float32
	if a, ok, err := f.Array(keyScores); err != nil {
		return metaErr(err)
	} else if ok {
		switch v := a.Values.(type) {
		case []float32:
			scores = v
		case []int32:
			// llama.cpp accepts integer scores and converts them.
			scores = make([]float32, len(v))
			for i, x := range v {
				scores[i] = float32(x)
			}
		default:
			return vocabErr(keyScores, "must be an array of float32 or int32, found an array of %s", a.Elem)
		}
		if len(scores) != n {
			return vocabErr(keyScores, "has %d entries for %d tokens", len(scores), n)
		}
	}

	var types []int32
	if a, ok, err := f.Array(keyTokenType); err != nil {
		return metaErr(err)
	} else if ok {
		v, isI32 := a.Values.([]int32)
		if !isI32 {
			return vocabErr(keyTokenType, "must be an array of int32, found an array of %s", a.Elem)
		}
		if len(v) != n {
			return vocabErr(keyTokenType, "has %d entries for %d tokens", len(v), n)
		}
		types = v
	}

	t.tokens = make([]tokenData, n)
	t.ids = make(map[string]int32, n)
	for i, text := range texts {
		if text == "" {
			// llama.cpp keeps empty tokens addressable under a placeholder.
			text = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if prev, dup := t.ids[text]; dup {
			return vocabErr(keyTokens, "duplicate token %q at ids %d and %d", text, prev, i)
		}
		t.ids[text] = int32(i)
		t.maxLen = max(t.maxLen, len(text))
		td := tokenData{text: text, attr: attrNormal}
		if scores != nil {
			td.score = scores[i]
		}
		if types != nil {
			switch types[i] {
			case typeUnknown:
				td.attr = attrUnknown
			case typeUnused:
				td.attr = attrUnused
			case typeNormal:
				td.attr = attrNormal
			case typeControl:
				td.attr = attrControl
			case typeUserDefined:
				td.attr = attrUserDefined
			case typeByte:
				td.attr = attrByte
				if _, ok := parseByteToken(text); !ok {
					return vocabErr(keyTokens, "token %d is typed as a byte but %q is not of the form <0xNN>", i, text)
				}
			default:
				td.attr = attrUndefined
			}
		}
		t.tokens[i] = td
	}
	return nil
}

// parseByteToken reads SentencePiece's byte-fallback spelling <0xNN>.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | c
	}
	return v, true
}

func (t *Tokenizer) loadMerges(f *gguf.File) error {
	a, ok, err := f.Array(keyMerges)
	if err != nil {
		return metaErr(err)
	}
	if !ok {
		return vocabErr(keyMerges, "missing (a gpt2 tokenizer needs its BPE merges)")
	}
	merges, isStr := a.Values.([]string)
	if !isStr {
		return vocabErr(keyMerges, "must be an array of strings, found an array of %s", a.Elem)
	}
	t.ranks = make(map[mergeKey]int32, len(merges))
	for i, m := range merges {
		// llama.cpp splits at the first space after the first byte, so a
		// pair whose left side is " " still parses, and a line without a
		// space becomes the empty pair.
		var k mergeKey
		if len(m) > 1 {
			if j := strings.IndexByte(m[1:], ' '); j >= 0 {
				k = mergeKey{m[:j+1], m[j+2:]}
			}
		}
		if _, seen := t.ranks[k]; !seen {
			t.ranks[k] = int32(i)
		}
	}
	t.indexMerges()
	return nil
}

type specialIDs struct {
	bos, eos, eot, eom, unk, sep, pad, mask        int32
	fimPre, fimSuf, fimMid, fimPad, fimRep, fimSep int32
}

func (s *specialIDs) init() {
	*s = specialIDs{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1}
}

func (t *Tokenizer) loadSpecial(f *gguf.File, ids *specialIDs) error {
	n := int64(len(t.tokens))
	for _, k := range []struct {
		key string
		id  *int32
	}{
		{keyBOS, &ids.bos}, {keyEOS, &ids.eos}, {keyEOT, &ids.eot}, {keyEOM, &ids.eom},
		{keyUNK, &ids.unk}, {keySEP, &ids.sep}, {keyPAD, &ids.pad}, {keyMask, &ids.mask},
		{keyFIMPre, &ids.fimPre}, {keyFIMSuf, &ids.fimSuf}, {keyFIMMid, &ids.fimMid},
		{keyFIMPad, &ids.fimPad}, {keyFIMRep, &ids.fimRep}, {keyFIMSep, &ids.fimSep},
		{keyPrefixOld, &ids.fimPre}, {keySuffixOld, &ids.fimSuf}, {keyMiddleOld, &ids.fimMid},
	} {
		// A default that does not fit the vocabulary is dropped, as
		// llama.cpp does; an explicit id that does not fit is an error.
		if int64(*k.id) >= n {
			*k.id = -1
		}
		v, ok, err := f.Uint(k.key)
		if err != nil {
			return metaErr(err)
		}
		// Converters write 0xFFFFFFFF (-1) for "no such token"
		// (stories260K's separator and padding ids, for example).
		if !ok || v == math.MaxUint32 {
			continue
		}
		if v >= uint64(n) {
			return vocabErr(k.key, "id %d is outside the vocabulary of %d tokens", v, n)
		}
		*k.id = int32(v)
	}
	if err := optBool(f, keyAddBOS, &t.addBOS); err != nil {
		return err
	}
	if err := optBool(f, keyAddEOS, &t.addEOS); err != nil {
		return err
	}
	addSep := false
	if err := optBool(f, keyAddSep, &addSep); err != nil {
		return err
	}
	if t.addBOS && ids.bos < 0 {
		return vocabErr(keyAddBOS, "is true, but %s is not set", keyBOS)
	}
	if t.addEOS && ids.eos < 0 {
		return vocabErr(keyAddEOS, "is true, but %s is not set", keyEOS)
	}
	if addSep && ids.sep < 0 {
		return vocabErr(keyAddSep, "is true, but %s is not set", keySEP)
	}

	t.detectSpecial(ids)
	t.bos, t.eos, t.eot, t.eom, t.unk, t.sep, t.pad = ids.bos, ids.eos, ids.eot, ids.eom, ids.unk, ids.sep, ids.pad
	return nil
}

// Token texts llama.cpp recognises when the metadata does not name them.
// llama.cpp walks a hash map, so which candidate wins when a vocabulary has
// several is unspecified there; here the list order decides.
var (
	eotTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}
	eomTexts    = []string{"<|eom_id|>"}
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>", "<|code_middle|>", "<|middle|>"}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	eogTexts    = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}
)

// detectSpecial is the text-based guessing in llama_vocab::impl::load: it
// fills unset EOT/EOM/FIM ids, builds the end-of-generation set and promotes
// the tokens involved to control, which keeps them out of plain-text
// matching.
func (t *Tokenizer) detectSpecial(ids *specialIDs) {
	control := func(id int32) { t.tokens[id].attr |= attrControl }
	find := func(dst *int32, texts []string) {
		if *dst >= 0 {
			return
		}
		for _, s := range texts {
			if id, ok := t.ids[s]; ok {
				*dst = id
				control(id)
				return
			}
		}
	}
	find(&ids.eot, eotTexts)
	find(&ids.eom, eomTexts)
	find(&ids.fimPre, fimPreTexts)
	find(&ids.fimSuf, fimSufTexts)
	find(&ids.fimMid, fimMidTexts)
	find(&ids.fimPad, fimPadTexts)
	find(&ids.fimRep, fimRepTexts)
	find(&ids.fimSep, fimSepTexts)

	for i := range t.tokens {
		a := &t.tokens[i].attr
		if *a&attrControl != 0 && strings.Contains(t.tokens[i].text, "unused") {
			*a |= attrUnused
		}
	}

	t.eog = map[int32]bool{}
	for _, id := range []int32{ids.fimPad, ids.fimRep, ids.fimSep} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			control(id)
		}
	}
	// gpt-oss renders these markers, so llama.cpp makes them user-defined
	// (and so matches them in user text too, which vkchat does not: see
	// tokenData.markup).
	for _, s := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.ids[s]; ok {
			t.tokens[id].attr = attrUserDefined
			t.tokens[id].markup = true
		}
	}
	for _, id := range []int32{ids.eos, ids.eot, ids.eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	has := func(s string) bool { id, ok := t.ids[s]; return ok && t.eog[id] }
	// o200k_harmony and solar-open use <|end|> mid-answer.
	if (has("<|return|>") && has("<|call|>") || has("<|calls|>") && has("<|flush|>")) && has("<|end|>") {
		id := t.ids["<|end|>"]
		delete(t.eog, id)
		t.tokens[id].attr = attrUserDefined
		t.tokens[id].markup = true
	}
	// gemma4 and paddleocr use </s> as ordinary text.
	if has("<|tool_response>") && has("</s>") {
		id := t.ids["</s>"]
		delete(t.eog, id)
		t.tokens[id].attr = attrNormal
	}
}

// finish builds the caches and applies llama.cpp's per-model attributes.
func (t *Tokenizer) finish(f *gguf.File) {
	for i := range t.tokens {
		if t.tokens[i].attr&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(i))
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(t.tokens[t.special[a]].text) > len(t.tokens[t.special[b]].text)
	})

	name, _, _ := f.String(keyGeneralName)
	name = strings.ToLower(name)
	preName, _, _ := f.String(keyPre)
	arch, _, _ := f.String(keyGeneralArch)
	setAttr := func(text string, a attr, on bool) {
		if id, ok := t.ids[text]; ok {
			if on {
				t.tokens[id].attr |= a
			} else {
				t.tokens[id].attr &^= a
			}
		}
	}
	containsAny := func(s string, subs ...string) bool {
		for _, sub := range subs {
			if strings.Contains(s, sub) {
				return true
			}
		}
		return false
	}
	switch {
	case containsAny(preName, "jina-v2-de", "jina-v2-es", "jina-v2-code") || containsAny(arch, "nomic-bert-moe", "jina-bert-v3"):
		setAttr("<mask>", attrLStrip, true)
	case containsAny(name, "phi-3", "phi3"):
		// Phi-3's special tokens swallow the whitespace after them.
		for _, id := range t.special {
			t.tokens[id].attr |= attrRStrip
		}
		setAttr("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			setAttr(s, attrRStrip, false)
		}
	case containsAny(name, "modern-bert"):
		setAttr("[MASK]", attrLStrip, true)
	}

	t.pieces = make([][]byte, len(t.tokens))
	for i := range t.tokens {
		t.pieces[i] = t.tokenToPiece(int32(i))
	}

	for b := range t.byteTok {
		t.byteTok[b] = -1
		if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			t.byteTok[b] = id
		} else if id, ok := t.ids[string([]byte{byte(b)})]; ok {
			t.byteTok[b] = id
		} else if t.unk >= 0 {
			// llama.cpp throws here; the unknown token keeps the text's
			// length visible instead.
			t.byteTok[b] = t.unk
		}
	}
}
