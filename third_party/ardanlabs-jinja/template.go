package jinja

import (
	"context"
	"fmt"
)

// Template is a compiled Jinja template ready for rendering.
type Template struct {
	nodes []node
	src   string
}

// Compile parses a Jinja template source string and returns a compiled
// template that can be rendered multiple times with different data. It
// applies DefaultLimits' MaxSource and MaxParseDepth.
func Compile(source string) (*Template, error) {
	return CompileLimits(source, Limits{})
}

// CompileLimits is Compile under lim's MaxSource and MaxParseDepth (zero
// fields take their defaults). Parsing takes time linear in the source.
func CompileLimits(source string, lim Limits) (*Template, error) {
	lim = lim.normalize()
	if lim.MaxSource >= 0 && int64(len(source)) > lim.MaxSource {
		return nil, fmt.Errorf("jinja scan: %w", &LimitError{Limit: "source size", Max: lim.MaxSource})
	}
	segs, err := scan(source)
	if err != nil {
		return nil, fmt.Errorf("jinja scan: %w", err)
	}

	nodes, err := parseTemplate(segs, lim.MaxParseDepth)
	if err != nil {
		return nil, fmt.Errorf("jinja parse: %w", err)
	}

	return &Template{nodes: nodes, src: source}, nil
}

// Render executes the template with the provided data and returns the
// rendered string. Each call creates an isolated scope so templates are
// safe to render concurrently after compilation. It applies
// DefaultLimits.
func (t *Template) Render(data map[string]any) (string, error) {
	return t.RenderContext(context.Background(), data, Limits{})
}

// RenderValues is like Render but accepts pre-converted Value data.
func (t *Template) RenderValues(data map[string]Value) (string, error) {
	return t.RenderValuesContext(context.Background(), data, Limits{})
}

// RenderContext is Render under lim (zero fields take their defaults)
// that stops, with an error wrapping ctx's, once ctx is done. A limit
// that is hit ends the render with a *LimitError (errors.Is ErrLimit).
func (t *Template) RenderContext(ctx context.Context, data map[string]any, lim Limits) (string, error) {
	vals := make(map[string]Value, len(data))
	for k, v := range data {
		vals[k] = FromGoValue(v)
	}
	return render(ctx, t.nodes, vals, lim)
}

// RenderValuesContext is RenderContext with pre-converted Value data.
func (t *Template) RenderValuesContext(ctx context.Context, data map[string]Value, lim Limits) (string, error) {
	return render(ctx, t.nodes, data, lim)
}

// =============================================================================

// render executes the AST with the given data and returns the result.
func render(ctx context.Context, nodes []node, data map[string]Value, lim Limits) (string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("template: render stopped: %w", err)
	}
	e := evaluator{g: newGuard(ctx, lim)}

	// Use the cached builtins scope directly. The scope is initialized
	// once at package init and is only read after that (lookupFilter,
	// chained get() through parent links, passed to nested evaluators).
	// No code path writes to e.builtins, so sharing the cached scope
	// across renders is safe and avoids cloning ~20 entries per render.
	e.builtins = cachedBuiltins

	// Create user data scope on top of builtins.
	e.scope = newScope(e.builtins)
	for k, v := range data {
		e.scope.set(k, v)
	}

	if err := e.execNodes(nodes); err != nil {
		return "", err
	}

	return e.output.String(), nil
}
