package jinja_test

import (
	"strings"
	"testing"

	"github.com/ardanlabs/jinja"
)

// TestWhitespaceControlStopsAtOutput pins the vkchat patch (see
// NOTE-UPSTREAM.md): whitespace control trims only the text next to the
// tag, never across {{ }} output. Expected values are Python jinja2 3.1's
// output with trim_blocks and lstrip_blocks, as Hugging Face renders chat
// templates.
func TestWhitespaceControlStopsAtOutput(t *testing.T) {
	cases := []struct{ src, want string }{
		{"{% if true %}a\n {{ x }}{% endif %}", "a\n X"},
		{"{% if true %} {{ x }}{% endif %}", " X"},
		{"{% if true %}a\n {{ x }}b{% endif %}", "a\n Xb"},
		{"{% for m in [1] %}<|{{ r }}|>\n {{ x }}{% endfor %}", "<|user|>\n X"},
		{"{% for m in [1, 2] %}{{ x }}\n{% endfor %}", "X\nX\n"},
		{"a \n{{ x }}{%- if true %}{% endif %}", "a \nX"},
		{"{% if true -%}{{ x }}\n b{% endif %}", "X\n b"},
		{"a\n {% if true %}{{ x }}{% endif %}", "a\nX"},
		{"{{ x }}  {% if true %}y{% endif %}", "X  y"},
		{"   {% if true %}y{% endif %}", "y"},
		{"{# c #}\n{{ x }}", "X"},
	}
	for _, tc := range cases {
		tmpl, err := jinja.Compile(tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		got, err := tmpl.Render(map[string]any{"x": "X", "r": "user"})
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.src, got, tc.want)
		}
	}
}

// TestUndefinedAttributeFails pins the second patch: reading an attribute
// or item of an undefined value is an error, as Jinja2's UndefinedError.
func TestUndefinedAttributeFails(t *testing.T) {
	for _, src := range []string{"{{ nothing[0] }}", "{{ nothing.attr }}", "{{ [][0]['role'] }}"} {
		tmpl, err := jinja.Compile(src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		_, err = tmpl.Render(nil)
		if err == nil || !strings.Contains(err.Error(), "is undefined") {
			t.Errorf("%q: error %v, want one saying what is undefined", src, err)
		}
	}
	// Undefined itself still prints as nothing and tests as not defined.
	tmpl, err := jinja.Compile("[{{ nothing }}]{% if nothing is defined %}!{% endif %}{% if d.missing is defined %}!{% endif %}")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(map[string]any{"d": map[string]any{}})
	if err != nil || got != "[]" {
		t.Errorf("got %q, %v; want \"[]\"", got, err)
	}
}
