package tokenizer

import "strings"

// Encode tokenizes text as llama.cpp's llama_tokenize does. addSpecial adds
// BOS/EOS where the vocabulary asks for them. parseSpecial lets control-token
// text such as "<|im_start|>" become that token; use it only for chat-template
// markup, never for user text. Tokens the vocabulary marks user-defined (type
// 4) are matched in any text, with or without parseSpecial, exactly as
// llama.cpp and Hugging Face do; some models store role markers that way.
// gpt-oss's harmony markers (<|start|>, <|message|>, <|channel|>,
// <|constrain|>, <|end|>), which llama.cpp retypes as user-defined so that
// they print, are the exception: they need parseSpecial, like control tokens.
func (t *Tokenizer) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	return t.EncodeParts([]Part{{Text: text, Special: parseSpecial}}, addSpecial)
}

// Part is a piece of text to encode and whether special-token text in it is
// recognised (chat-template markup) or not (message content).
type Part struct {
	Text    string
	Special bool
}

// EncodeParts tokenizes the concatenation of parts in one pass, as llama.cpp
// tokenizes a rendered chat prompt, except that special tokens are only
// recognised inside parts marked Special. Encoding the parts one by one
// instead would add SentencePiece's space prefix at every part boundary.
func (t *Tokenizer) EncodeParts(parts []Part, addSpecial bool) []int32 {
	var segs []segment
	n := 0
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		n += len(p.Text)
		for _, s := range t.partition(p.Text, p.Special) {
			if last := len(segs) - 1; s.id < 0 && last >= 0 && segs[last].id < 0 {
				segs[last].text += s.text
				continue
			}
			segs = append(segs, s)
		}
	}
	out := make([]int32, 0, n/3+2)
	if addSpecial && t.addBOS {
		out = append(out, t.bos)
	}
	switch t.kind {
	case kindSPM:
		// The space prefix goes before the first text and before text that
		// follows any special token, as llama.cpp's is_prev_special does.
		prevSpecial := true
		for _, s := range segs {
			if s.id >= 0 {
				out = append(out, s.id)
				prevSpecial = true
				continue
			}
			txt := s.text
			if t.addSpacePrefix && prevSpecial {
				txt = " " + txt
			}
			out = t.encodeSPM(strings.ReplaceAll(txt, " ", "▁"), out)
			prevSpecial = false
		}
	case kindBPE:
		var sc bpeScratch
		for _, s := range segs {
			if s.id >= 0 {
				out = append(out, s.id)
				continue
			}
			txt := s.text
			if t.escapeWhitespace {
				txt = strings.ReplaceAll(txt, " ", "▁")
			}
			out = t.encodeBPE(txt, out, &sc)
		}
	}
	if addSpecial && t.addEOS {
		out = append(out, t.eos)
	}
	return out
}
