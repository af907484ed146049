package engine

import (
	"fmt"
	"strings"

	"vkchat/runtime/chat"
	"vkchat/runtime/tokenizer"
)

// encodeConversation turns messages into prompt tokens. Template markup is
// tokenized with special-token parsing; message content never is, so a user
// typing "<|im_start|>" cannot forge a turn.
func (s *Session) encodeConversation(msgs []chat.Message) ([]int32, error) {
	if s.tmpl == nil {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(m.Content)
		}
		return s.tok.Encode(b.String(), true, false), nil
	}
	segs, err := s.tmpl.RenderSegments(msgs, true, s.tok.TokenText(s.tok.BOS()), s.tok.TokenText(s.tok.EOS()))
	if err != nil {
		return nil, fmt.Errorf("render chat template %s: %w", s.tmpl.Name(), err)
	}
	parts := make([]tokenizer.Part, len(segs))
	for i, seg := range segs {
		parts[i] = tokenizer.Part{Text: seg.Text, Special: !seg.Content}
	}
	ids := s.tok.EncodeParts(parts, false)
	// Templates that print bos_token themselves already start with it;
	// the others rely on the tokenizer adding it.
	if bos := s.tok.BOS(); s.tok.AddBOS() && bos >= 0 && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int32{bos}, ids...)
	}
	return ids, nil
}

// fitConversation drops the oldest messages after a leading system prompt
// until the prompt leaves room for reserve generated tokens. It returns the
// tokens and how many messages were dropped.
func (s *Session) fitConversation(msgs []chat.Message, reserve int) ([]int32, int, error) {
	keep := 0
	if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
		keep = 1
	}
	dropped := 0
	for {
		ids, err := s.encodeConversation(msgs)
		if err != nil {
			return nil, dropped, err
		}
		if len(ids)+reserve <= s.ctxSize {
			return ids, dropped, nil
		}
		// Drop whole exchanges so the conversation still alternates, but
		// never the final user turn.
		if len(msgs)-keep <= 1 {
			return nil, dropped, fmt.Errorf("the message needs %d tokens but the context holds %d (with %d kept for the reply): shorten it or raise --ctx", len(ids), s.ctxSize, reserve)
		}
		n := 1
		if len(msgs)-keep > 2 && msgs[keep].Role == chat.RoleUser {
			n = 2
		}
		msgs = append(append([]chat.Message(nil), msgs[:keep]...), msgs[keep+n:]...)
		dropped += n
	}
}
