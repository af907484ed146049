package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"vkchat/runtime/chat"
	"vkchat/runtime/gguf"
	"vkchat/runtime/tokenizer"
)

// PromptToken is one token of a rendered prompt.
type PromptToken struct {
	ID    int32
	Text  string // as the vocabulary stores it
	Piece string // the bytes it decodes to ("" for control tokens)
	// Special: a control or user-defined token (template markup such as
	// <|im_start|>), never produced from message content.
	Special bool
}

// RenderedPrompt is exactly what the model reads for a request.
type RenderedPrompt struct {
	Template string // the template's name ("gguf", a built-in), "" in completion mode
	// TemplateNote says why the model's own template is not the one used
	// ("" when it is).
	TemplateNote string `json:",omitempty"`
	// FoldsSystem: the template refuses or drops the system role, so the
	// system prompt was folded into the first user turn, as llama.cpp does.
	FoldsSystem bool
	// OpensThinking: the prompt ends inside a <think> block, so the reply
	// starts with reasoning (DeepSeek-R1's template does this).
	OpensThinking bool
	Text          string
	Tokens        []PromptToken
	// DroppedMessages counts the oldest messages left out to fit the
	// context (only a session fits; see Session.RenderPrompt).
	DroppedMessages int
}

// encoded is a conversation rendered and tokenized.
type encoded struct {
	ids       []int32
	text      string
	thinkOpen bool
	// reasoning is how the model marks its reasoning (chat.ThinkTags
	// for completion mode and most templates)
	reasoning chat.Reasoning
}

// promptOptions are the template variables of a request.
func promptOptions(tok *tokenizer.Tokenizer, req Request) chat.Options {
	return chat.Options{AddGenerationPrompt: true, BOS: tok.TokenText(tok.BOS()), EOS: tok.TokenText(tok.EOS()),
		DisableThinking: req.DisableThinking, ReasoningEffort: req.ReasoningEffort, Now: time.Now()}
}

// encodeWith turns messages into prompt tokens. Template markup is
// tokenized with special-token parsing; message content never is, so a user
// typing "<|im_start|>" cannot forge a turn.
func encodeWith(ctx context.Context, tok *tokenizer.Tokenizer, tmpl *chat.Template, msgs []chat.Message, o chat.Options) (encoded, error) {
	if tmpl == nil {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(m.Content)
		}
		return encoded{ids: tok.Encode(b.String(), true, false), text: b.String(), reasoning: chat.ThinkTags}, nil
	}
	segs, err := tmpl.RenderSegmentsContext(ctx, msgs, o)
	if err != nil {
		return encoded{}, fmt.Errorf("render chat template %s: %w", tmpl.Name(), err)
	}
	parts := make([]tokenizer.Part, len(segs))
	for i, seg := range segs {
		parts[i] = tokenizer.Part{Text: seg.Text, Special: !seg.Content}
	}
	ids := tok.EncodeParts(parts, false)
	// Templates that print bos_token themselves already start with it;
	// the others rely on the tokenizer adding it.
	if bos := tok.BOS(); tok.AddBOS() && bos >= 0 && (len(ids) == 0 || ids[0] != bos) {
		ids = append([]int32{bos}, ids...)
	}
	return encoded{ids: ids, text: chat.Join(segs), thinkOpen: tmpl.Reasoning().Opens(segs), reasoning: tmpl.Reasoning()}, nil
}

// encodeConversation is encodeWith for this session's model and default
// template variables.
func (s *Session) encodeConversation(msgs []chat.Message) ([]int32, error) {
	e, err := encodeWith(context.Background(), s.tok, s.tmpl, msgs, promptOptions(s.tok, Request{}))
	return e.ids, err
}

// fitConversation drops the oldest messages after a leading system prompt
// until the prompt leaves room for reserve generated tokens. It returns the
// tokens and how many messages were dropped.
func (s *Session) fitConversation(msgs []chat.Message, reserve int) ([]int32, int, error) {
	e, dropped, err := s.fitRequest(Request{Messages: msgs}, reserve)
	return e.ids, dropped, err
}

// fitRequest is fitConversation for a request, with its template variables.
func (s *Session) fitRequest(req Request, reserve int) (encoded, int, error) {
	return s.fitRequestContext(context.Background(), req, reserve)
}

// fitRequestContext is fitRequest whose template renders stop once ctx
// is done (Generate should pass its context here).
func (s *Session) fitRequestContext(ctx context.Context, req Request, reserve int) (encoded, int, error) {
	msgs := req.Messages
	opts := promptOptions(s.tok, req)
	keep := 0
	if len(msgs) > 0 && msgs[0].Role == chat.RoleSystem {
		keep = 1
	}
	dropped := 0
	for {
		e, err := encodeWith(ctx, s.tok, s.tmpl, msgs, opts)
		if err != nil {
			return encoded{}, dropped, err
		}
		if len(e.ids)+reserve <= s.ctxSize {
			return e, dropped, nil
		}
		// Drop whole exchanges so the conversation still alternates, but
		// never the final user turn.
		if len(msgs)-keep <= 1 {
			return encoded{}, dropped, fmt.Errorf("the message needs %d tokens but the context holds %d (with %d kept for the reply): shorten it or raise --ctx", len(e.ids), s.ctxSize, reserve)
		}
		n := 1
		if len(msgs)-keep > 2 && msgs[keep].Role == chat.RoleUser {
			n = 2
		}
		msgs = append(append([]chat.Message(nil), msgs[:keep]...), msgs[keep+n:]...)
		dropped += n
	}
}

// RenderPrompt is the prompt the next Generate for req would compute, the
// conversation fitted to the context as Generate fits it.
func (s *Session) RenderPrompt(req Request) (RenderedPrompt, error) {
	e, dropped, err := s.fitRequest(req, s.replyReserve(req.MaxTokens))
	if err != nil {
		return RenderedPrompt{}, err
	}
	r := describePrompt(s.tok, s.tmpl, e)
	r.DroppedMessages, r.TemplateNote = dropped, s.info.TemplateNote
	return r, nil
}

func describePrompt(tok *tokenizer.Tokenizer, tmpl *chat.Template, e encoded) RenderedPrompt {
	r := RenderedPrompt{Text: e.text, OpensThinking: e.thinkOpen, Tokens: make([]PromptToken, len(e.ids))}
	if tmpl != nil {
		r.Template, r.FoldsSystem = tmpl.Name(), tmpl.FoldsSystem()
	}
	for i, id := range e.ids {
		r.Tokens[i] = PromptToken{ID: id, Text: tok.TokenText(id), Piece: string(tok.Piece(id)), Special: tok.IsSpecial(id)}
	}
	return r
}

// Prompter renders prompts for a model file without loading its weights:
// the vocabulary and the chat template are all a prompt needs.
type Prompter struct {
	file *gguf.File
	tok  *tokenizer.Tokenizer
	tmpl *chat.Template
	note string // why the model's own template is not the one in use
}

// OpenPrompter reads the model's tokenizer and chat template; template
// forces a built-in ("none": completion mode) as Options.Template does.
func OpenPrompter(path, template string) (*Prompter, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	arch, _, _ := f.String("general.architecture")
	tmpl, note, err := pickTemplate(context.Background(), f, arch, template)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Prompter{file: f, tok: tok, tmpl: tmpl, note: note}, nil
}

// Render renders and tokenizes req's conversation with the generation
// prompt, as Generate would before fitting it to a context.
func (p *Prompter) Render(req Request) (RenderedPrompt, error) {
	e, err := encodeWith(context.Background(), p.tok, p.tmpl, req.Messages, promptOptions(p.tok, req))
	if err != nil {
		return RenderedPrompt{}, err
	}
	r := describePrompt(p.tok, p.tmpl, e)
	r.TemplateNote = p.note
	return r, nil
}

// Completion reports completion mode: no chat template, the messages are
// joined as plain text.
func (p *Prompter) Completion() bool { return p.tmpl == nil }

// Close releases the mapped file.
func (p *Prompter) Close() error { return p.file.Close() }
