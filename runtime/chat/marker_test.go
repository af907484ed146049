package chat

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMarkerAvoidsInputs(t *testing.T) {
	msgs := []Message{{RoleUser, "vkc00000000m and vkc00000001m"}, {"vkc00000002m", "x"}}
	mk := newMarker("template mentions vkc00000003m", "", "", msgs)
	if mk.prefix != "vkc00000004m" {
		t.Fatalf("prefix %q, want the first one no input contains", mk.prefix)
	}
}

func TestMarkerSplit(t *testing.T) {
	mk := marker{prefix: "P"}
	cases := []struct {
		shape string
		n     int
		lits  []string
		refs  []int
		ok    bool
	}{
		{"a P0e b P1e c", 2, []string{"a ", " b ", " c"}, []int{0, 1}, true},
		{"P1eP0eP1e", 2, []string{"", "", "", ""}, []int{1, 0, 1}, true},
		{"no holes", 3, []string{"no holes"}, nil, true},
		{"P12e", 13, []string{"", ""}, []int{12}, true},
		{"P1", 2, nil, nil, false},            // cut after the digits
		{"P1x", 2, nil, nil, false},           // terminator altered
		{"Pe", 2, nil, nil, false},            // digits lost
		{"P5e", 2, nil, nil, false},           // no such message
		{"P99999999999e", 2, nil, nil, false}, // would overflow
	}
	for _, tc := range cases {
		lits, refs, ok := mk.split(tc.shape, tc.n)
		if ok != tc.ok || !slices.Equal(lits, tc.lits) || !slices.Equal(refs, tc.refs) {
			t.Errorf("split(%q) = %q %v %v, want %q %v %v", tc.shape, lits, refs, ok, tc.lits, tc.refs, tc.ok)
		}
	}
}

// bruteMarker is the obvious rule newMarker implements: try each prefix
// in turn, take the first no input contains.
func bruteMarker(inputs []string) string {
	for n := 0; ; n++ {
		p := fmt.Sprintf("vkc%08xm", n)
		if !slices.ContainsFunc(inputs, func(in string) bool { return strings.Contains(in, p) }) {
			return p
		}
	}
}

// markerRun is text made of n prefix-shaped runs, "vkc00000000m vkc00000001m …".
func markerRun(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "vkc%08xm ", i)
	}
	return b.String()
}

func TestMarkerMatchesBruteForce(t *testing.T) {
	cases := []struct {
		name string
		msgs []Message
		src  string
	}{
		{"none", []Message{{RoleUser, "hi"}}, "{{ x }}"},
		{"run", []Message{{RoleUser, markerRun(300)}}, ""},
		{"gap", []Message{{RoleUser, "vkc00000000m vkc00000001m vkc00000003m"}}, ""},
		{"glued", []Message{{RoleUser, "vkc00000000mvkc00000001m"}}, ""},
		{"overlap", []Message{{RoleUser, "vkcvkc00000000m"}}, ""},
		{"upper hex is no clash", []Message{{RoleUser, "vkc0000000Am vkc00000000m"}}, ""},
		{"short", []Message{{RoleUser, "vkc0000000m vkc00000000"}}, ""},
		{"in role and bos", []Message{{"vkc00000001m", "vkc00000002m"}}, "vkc00000000m"},
		{"sign", []Message{{RoleUser, "vkc+0000000m vkc00000000m"}}, ""},
	}
	for _, tc := range cases {
		inputs := []string{tc.src, "", ""}
		for _, m := range tc.msgs {
			inputs = append(inputs, m.Role, m.Content)
		}
		if got, want := newMarker(tc.src, "", "", tc.msgs).prefix, bruteMarker(inputs); got != want {
			t.Errorf("%s: prefix %q, want %q", tc.name, got, want)
		}
	}
}

// TestMarkerRunLinear: choosing a prefix past 100,000 runs in the text
// allocates a bounded amount per run (the map of numbers seen), not per
// candidate tried against the whole text.
func TestMarkerRunLinear(t *testing.T) {
	text := markerRun(100_000)
	msgs := []Message{{RoleUser, text}}
	var mk marker
	allocs := testing.AllocsPerRun(1, func() { mk = newMarker("", "", "", msgs) })
	if want := fmt.Sprintf("vkc%08xm", 100_000); mk.prefix != want {
		t.Fatalf("prefix %q, want %q", mk.prefix, want)
	}
	// the old search made a prefix string per candidate tried: 100,001
	if allocs > 10_000 {
		t.Errorf("%v allocations to choose a prefix past 100,000 runs", allocs)
	}
}

// BenchmarkMarkerRun is marker selection on text made of prefix-shaped
// runs; the time per run stays flat as the text grows.
//
//	go test ./runtime/chat -run '^$' -bench MarkerRun
func BenchmarkMarkerRun(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		msgs := []Message{{RoleUser, markerRun(n)}}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(msgs[0].Content)))
			for range b.N {
				newMarker("", "", "", msgs)
			}
		})
	}
}

// BenchmarkRenderSegmentsMarkerText is one turn's prompt render (the
// template run twice and fitted) of a 1.2 MB message made of
// prefix-shaped runs, through a real model template.
//
//	go test ./runtime/chat -run '^$' -bench RenderSegmentsMarkerText -benchtime 3x
func BenchmarkRenderSegmentsMarkerText(b *testing.B) {
	tmpl := modelTemplateFrom(b, "qwen2-instruct.jinja")
	msgs := []Message{{RoleUser, markerRun(100_000)}, {RoleAssistant, "ok"}, {RoleUser, "and?"}}
	b.SetBytes(int64(len(msgs[0].Content)))
	for range b.N {
		if _, err := tmpl.RenderSegments(msgs, true, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}
