package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/ardanlabs/jinja"
)

// Limits bound every compile and render of a model's template: the
// template is code from a model file, and whatever it does must end in an
// error naming the limit, not in exhausted memory, a stack overflow or a
// hang. The defaults are far above what chat templates need on any
// conversation a context window holds.
var Limits = jinja.DefaultLimits()

// RenderTimeout bounds one render however its caller's context is set; a
// template that reaches it has run far more steps than any real one.
var RenderTimeout = 10 * time.Second

// jinjaTemplate is a model's own chat template, run by the Jinja engine.
//
// A template turns messages into one string, so it cannot say by itself
// which bytes came from message content. We render twice: once as is (the
// prompt the model expects) and once with every content replaced by a
// unique marker. The marker render is the template's markup with holes;
// fitting it against the true render recovers the content bytes, which
// become Content segments. The markers are plain ASCII so that filters a
// template may apply (trim, tojson, escaping) leave them intact, and their
// prefix is chosen to occur in no input. Templates may trim content, so a
// hole may hold the content stripped on either side (see fit for the
// whitespace rules). Empty content is left empty rather than marked, as
// templates test content for truthiness. When the two renders
// cannot be fitted — say, a template that branches on what a message
// says — rendering fails with ErrSegments rather than guessing, since a
// wrong guess could let content be read as control tokens.
type jinjaTemplate struct {
	src  string
	tmpl *jinja.Template
}

func compileJinja(src string) (j *jinjaTemplate, err error) {
	// The engine runs text from model files; whatever it does with a
	// hostile template must come back as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("jinja compile panicked: %v", r)
		}
	}()
	t, err := jinja.CompileLimits(src, Limits)
	if err != nil {
		return nil, err
	}
	return &jinjaTemplate{src: src, tmpl: t}, nil
}

func (j *jinjaTemplate) text(ctx context.Context, msgs []Message, o Options) (string, error) {
	contents := make([]string, len(msgs))
	for i, m := range msgs {
		contents[i] = m.Content
	}
	return j.exec(ctx, msgs, contents, o)
}

func (j *jinjaTemplate) render(ctx context.Context, msgs []Message, o Options) ([]Segment, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	// One render is two passes and the fit; RenderTimeout bounds them
	// together, as it bounds a plain render.
	ctx, cancel := context.WithTimeout(ctx, RenderTimeout)
	defer cancel()
	truth, err := j.text(ctx, msgs, o)
	if err != nil {
		return nil, err
	}
	contents := make([]string, len(msgs))
	mk := newMarker(j.src, o.BOS, o.EOS, msgs)
	for i, m := range msgs {
		// Phi-3.5, for one, drops an empty system prompt; a marker
		// would make it print one.
		if m.Content != "" {
			contents[i] = mk.hole(i)
		}
	}
	shape, err := j.exec(ctx, msgs, contents, o)
	if err != nil {
		return nil, fmt.Errorf("%w: the template fails when content is replaced by a marker: %v", ErrSegments, err)
	}
	lits, refs, ok := mk.split(shape, len(msgs))
	if !ok {
		return nil, fmt.Errorf("%w: the template alters or cuts message content", ErrSegments)
	}
	segs, ok, err := fit(ctx, truth, lits, refs, msgs)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: the output depends on message content in a way markers cannot follow", ErrSegments)
	}
	return segs, nil
}

// exec renders with the given content per message, under Limits and
// RenderTimeout, stopping when ctx is done.
func (j *jinjaTemplate) exec(ctx context.Context, msgs []Message, contents []string, o Options) (out string, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, RenderTimeout)
	defer cancel()
	list := make([]jinja.Value, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		d.AsDict().Set("role", jinja.NewString(m.Role))
		d.AsDict().Set("content", jinja.NewString(contents[i]))
		list[i] = d
	}
	// Our own raise_exception tells a template's deliberate refusal apart
	// from an engine error, whatever the engine does to the error on the
	// way out.
	var raised *RaiseError
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(list),
		"add_generation_prompt": jinja.NewBool(o.AddGenerationPrompt),
		"bos_token":             jinja.NewString(o.BOS),
		"eos_token":             jinja.NewString(o.EOS),
		// What llama.cpp passes besides: enable_thinking always, the
		// date as Llama 3.x templates read it, strftime_now, and
		// firefunction-v2's datetime and functions.
		"enable_thinking": jinja.NewBool(!o.DisableThinking),
		"date_string":     jinja.NewString(now.Format("02 Jan 2006")),
		// firefunction-v2's template prints "Today is {{datetime}}.";
		// llama.cpp's server gives every template this date-only form
		// (common_chat_extra_context: "%b %d %Y"), so a model sees the
		// same system prompt under vkchat as under llama-server. Without
		// tools "functions" renders empty either way.
		"datetime":  jinja.NewString(strftime(now, "%b %d %Y")),
		"functions": jinja.NewString(""),
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), fmt.Errorf("strftime_now takes one format string")
			}
			if len(args[0].AsString()) > maxStrftimeFormat {
				return jinja.Undefined(), fmt.Errorf("strftime_now: format longer than %d bytes", maxStrftimeFormat)
			}
			return jinja.NewString(strftime(now, args[0].AsString())), nil
		}),
		"raise_exception": jinja.NewCallable("raise_exception", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			raised = &RaiseError{Msg: "the template refused the conversation"}
			if len(args) > 0 {
				raised.Msg = valueText(args[0])
			}
			return jinja.Undefined(), raised
		}),
	}
	if o.ReasoningEffort != "" {
		data["reasoning_effort"] = jinja.NewString(o.ReasoningEffort)
	}
	defer func() {
		if r := recover(); r != nil {
			out, err = "", fmt.Errorf("jinja render panicked: %v", r)
		}
	}()
	out, err = j.tmpl.RenderValuesContext(ctx, data, Limits)
	if raised != nil {
		return "", raised
	}
	return out, err
}

func valueText(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}
