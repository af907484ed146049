package tokenizer

import (
	"fmt"
	"strings"
)

// tokenToPiece is llama.cpp's token_to_piece with special=true: the bytes a
// token stands for. Tokens of no usable type render as nothing.
func (t *Tokenizer) tokenToPiece(id int32) []byte {
	td := &t.tokens[id]
	switch {
	case td.attr&(attrUnknown|attrControl|attrUserDefined) != 0:
		return []byte(td.text)
	case td.attr&attrNormal != 0:
		if t.kind == kindSPM || t.escapeWhitespace {
			return []byte(strings.ReplaceAll(td.text, "▁", " "))
		}
		return decodeByteLevel(td.text)
	case td.attr&attrByte != 0:
		b, _ := parseByteToken(td.text)
		return []byte{b}
	}
	return nil
}

// decodeByteLevel maps GPT-2 byte-level text back to bytes. A code point
// outside the alphabet is spelled out the way llama.cpp's llama_decode_text
// does, so a broken vocabulary shows up instead of vanishing.
func decodeByteLevel(text string) []byte {
	out := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		c, n := decodeOne(text, i)
		if b, ok := runeToByte[c]; ok {
			out = append(out, b)
		} else {
			out = append(out, "[UNK_BYTE_0x"...)
			for _, x := range appendCpt(nil, c) {
				out = fmt.Appendf(out, "%02x", x)
			}
			out = append(out, text...)
			out = append(out, ']')
		}
		i += n
	}
	return out
}

// Piece returns the raw bytes of one token, as llama.cpp's token_to_piece
// with special=false gives them: byte-fallback tokens give their byte,
// SentencePiece's ▁ becomes a space, byte-level BPE text is mapped back to
// bytes, user-defined tokens give their text, and control and unknown tokens
// give nothing (TokenText has their text). Nil if id is out of range.
func (t *Tokenizer) Piece(id int32) []byte {
	if !t.valid(id) {
		return nil
	}
	return append([]byte{}, t.piece(id)...)
}

// piece is token_to_piece with special=false: control and unknown tokens
// render as nothing, as they do in llama.cpp's detokenizer by default.
func (t *Tokenizer) piece(id int32) []byte {
	if !t.valid(id) || t.tokens[id].attr&(attrUnknown|attrControl) != 0 {
		return nil
	}
	return t.pieces[id]
}

// Decode concatenates the pieces of ids the way llama.cpp's detokenize does
// with remove_special and unparse_special off: control tokens render as
// nothing and, where the vocabulary adds a space prefix, one leading space of
// the first token is dropped. llama.cpp's clean_up_tokenization_spaces pass
// for some BPE models (" ," -> ",") is deliberately not applied: it is lossy,
// and Decode(Encode(s)) must give s back.
func (t *Tokenizer) Decode(ids []int32) string {
	var out []byte
	for i, id := range ids {
		p := t.piece(id)
		if i == 0 && t.addSpacePrefix && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		out = append(out, p...)
	}
	return string(out)
}
