package chat

import (
	"context"
	"testing"
)

// TestPatchedJinjaInUse fails when the build uses upstream
// github.com/ardanlabs/jinja instead of the patched copy (a go.mod
// rewrite dropping the replace directive has happened once).
func TestPatchedJinjaInUse(t *testing.T) {
	cases := []struct{ src, want string }{
		// Upstream trims across {{ }} output: "XX".
		{"{% for m in messages %}{{ m.content }}\n{% endfor %}", "X\nX\n"},
		// Upstream renders an undefined value's item as nothing.
		{"{{ nothing[0] }}", "error"},
	}
	for _, tc := range cases {
		j, err := compileJinja(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		got, err := j.text(context.Background(), []Message{{RoleUser, "X"}, {RoleUser, "X"}}, Options{})
		if err != nil {
			got = "error"
		}
		if got != tc.want {
			t.Errorf("%q renders %q, want %q: go.mod must replace github.com/ardanlabs/jinja with ./third_party/ardanlabs-jinja (see its NOTE-UPSTREAM.md)", tc.src, got, tc.want)
		}
	}
}
