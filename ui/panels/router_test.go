package panels

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"vkchat/runtime/engine"
	"vkchat/ui/termtext"
)

// synthRouting is a deterministic routing of one token over layers layers
// of e experts, k each, most weight first, the weights summing to 1.
func synthRouting(token, layers, e, k int) []engine.Routing {
	out := make([]engine.Routing, layers)
	for l := range out {
		seen := map[int32]bool{}
		x := uint32(token*7919 + l*104729 + 17)
		var sum float32
		r := engine.Routing{}
		for len(r.Experts) < k {
			x = x*1664525 + 1013904223
			id := int32(x>>8) % int32(e)
			if seen[id] {
				continue
			}
			seen[id] = true
			r.Experts = append(r.Experts, id)
			w := float32(k-len(r.Weights)) + float32(x%5)/10
			r.Weights = append(r.Weights, w)
			sum += w
		}
		for j := range r.Weights {
			r.Weights[j] /= sum
		}
		out[l] = r
	}
	return out
}

func synthReply(tokens, layers, e, k int) [][]engine.Routing {
	out := make([][]engine.Routing, tokens)
	for i := range out {
		out[i] = synthRouting(i, layers, e, k)
	}
	return out
}

// TestRouterLines: the router panel of one token, as a full grid when a
// cell per expert fits and as the chosen experts alone when not, always
// within its rows and width, naming every chosen expert of the layers it
// shows (when the row has room) and counting the layers it leaves out.
func TestRouterLines(t *testing.T) {
	st := asciiStyles()
	tests := []struct {
		name                 string
		layers, experts, k   int
		width, rows          int
		grid                 bool
		shownLayers, omitted int
	}{
		{"4x8 top-2", 4, 8, 2, 40, 10, true, 4, 0},
		{"4x8 top-2 narrow", 4, 8, 2, 12, 10, true, 4, 0},
		{"4x8 top-2 no room for the ruler", 4, 8, 2, 40, 4, false, 4, 0},
		{"4x8 top-2 few rows", 4, 8, 2, 40, 3, false, 2, 2},
		{"4x8 top-2 in two columns", 4, 8, 2, 80, 2, false, 4, 0},
		{"48x128 top-8 condensed", 48, 128, 8, 56, 12, false, 11, 37},
		{"48x128 top-8 wide grid", 48, 128, 8, 200, 60, true, 48, 0},
		{"2x8 top-2 one row", 2, 8, 2, 40, 1, false, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Router{Title: "step 3", Experts: tc.experts, Layers: synthRouting(3, tc.layers, tc.experts, tc.k)}
			lines := RouterLines(st, r, tc.width, tc.rows)
			if len(lines) > tc.rows {
				t.Fatalf("%d rows, want ≤ %d", len(lines), tc.rows)
			}
			for i, l := range lines {
				if w := termtext.Width(l); w > tc.width {
					t.Errorf("row %d is %d cells wide, want ≤ %d: %q", i, w, tc.width, l)
				}
			}
			want := fmt.Sprintf("%d of %d experts", tc.k, tc.experts)
			if head := RouterTitle(r); !strings.Contains(head, want) {
				t.Errorf("heading %q lacks %q", head, want)
			}
			isGrid := strings.HasPrefix(strings.TrimSpace(lines[0]), "0")
			if tc.rows > 1 && isGrid != tc.grid {
				t.Errorf("grid %v, want %v:\n%s", isGrid, tc.grid, strings.Join(lines, "\n"))
			}
			shown := 0
			for _, l := range lines {
				shown += len(layerRE.FindAllString(l, -1))
			}
			if shown != tc.shownLayers {
				t.Errorf("%d layers shown, want %d:\n%s", shown, tc.shownLayers, strings.Join(lines, "\n"))
			}
			if tc.omitted > 0 && !strings.Contains(lines[len(lines)-1], fmt.Sprintf("%d more layers", tc.omitted)) {
				t.Errorf("last row %q does not count the %d layers left out", lines[len(lines)-1], tc.omitted)
			}
			if tc.width >= 40 && tc.rows > 1 {
				text := strings.Join(lines, "\n")
				for i := range shown {
					row := text[strings.Index(text, layerLabel(i, tc.layers)+" "):]
					row, _, _ = strings.Cut(row, "   L")
					row, _, _ = strings.Cut(row, "\n")
					for j, x := range r.Layers[i].Experts {
						item := fmt.Sprintf("#%d %s", x, weightText(r.Layers[i].Weights[j]))
						if !strings.Contains(row, item) && !strings.Contains(row, "…") {
							t.Errorf("layer %d row %q lacks %q", i, row, item)
						}
					}
				}
			}
		})
	}
	if got := RouterLines(st, Router{Title: "step 1", Empty: "no token sampled yet"}, 40, 5); len(got) != 1 || !strings.Contains(got[0], "no token") {
		t.Errorf("no routing: %q", got)
	}
}

var layerRE = regexp.MustCompile(`\bL\d+ `)

// TestExpertUsage: the counts add up to k per layer per token, and the map
// fits its width whether a cell holds one expert or a group.
func TestExpertUsage(t *testing.T) {
	st := asciiStyles()
	tests := []struct {
		name                       string
		tokens, layers, experts, k int
		width, rows                int
		group                      bool
	}{
		{"4x8 top-2", 30, 4, 8, 2, 60, 8, false},
		{"48x128 top-8 grouped", 50, 48, 128, 8, 76, 20, true},
		{"48x128 top-8 wide", 50, 48, 128, 8, 160, 60, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			routes := synthReply(tc.tokens, tc.layers, tc.experts, tc.k)
			routes = append(routes, nil) // a token without routing counts nowhere
			u := NewExpertUsage("reply 1", routes, tc.experts)
			if u.Tokens != tc.tokens || len(u.Counts) != tc.layers || len(u.Counts[0]) != tc.experts {
				t.Fatalf("%d tokens, %d layers × %d experts", u.Tokens, len(u.Counts), len(u.Counts[0]))
			}
			for l, c := range u.Counts {
				sum := 0
				for _, n := range c {
					sum += n
				}
				if sum != tc.tokens*tc.k {
					t.Errorf("layer %d: %d routings, want %d", l, sum, tc.tokens*tc.k)
				}
			}
			lines := ExpertHeatLines(st, u, tc.width, tc.rows)
			if len(lines) > tc.rows {
				t.Fatalf("%d rows, want ≤ %d", len(lines), tc.rows)
			}
			for i, l := range lines {
				if w := termtext.Width(l); w > tc.width {
					t.Errorf("row %d is %d cells wide, want ≤ %d: %q", i, w, tc.width, l)
				}
			}
			if got := strings.Contains(lines[0], "busiest of"); got != tc.group {
				t.Errorf("grouped %v, want %v: %q", got, tc.group, lines[0])
			}
		})
	}
	if got := ExpertHeatLines(st, NewExpertUsage("reply 1", [][]engine.Routing{nil}, 8), 40, 5); len(got) != 1 {
		t.Errorf("no routing: %q", got)
	}
}

// TestRouterGoldens pins the router panel and the expert map of a small
// and a large model; regenerate with go test ./ui/panels -run TestRouterGoldens -update.
func TestRouterGoldens(t *testing.T) {
	st := asciiStyles()
	for _, m := range []struct {
		name               string
		layers, experts, k int
	}{{"4x8top2", 4, 8, 2}, {"48x128top8", 48, 128, 8}} {
		for _, w := range []int{36, 60} {
			var b strings.Builder
			r := Router{Title: "step 3", Experts: m.experts, Layers: synthRouting(3, m.layers, m.experts, m.k)}
			b.WriteString(strings.Join(Box(st, "Router · "+RouterTitle(r), RouterLines(st, r, InnerWidth(w), 12), w), "\n") + "\n")
			u := NewExpertUsage("reply 1", synthReply(40, m.layers, m.experts, m.k), m.experts)
			b.WriteString(strings.Join(ExpertHeatLines(st, u, 2*w, 12), "\n") + "\n")
			t.Run(fmt.Sprintf("%s_width%d", m.name, w), func(t *testing.T) { golden.RequireEqual(t, []byte(b.String())) })
		}
	}
}

// moeMemory is a mixture-of-experts model's memory panel data: 2 layers of
// 8 experts, 2 per token, each expert 98,304 B.
func moeMemory() Memory {
	info := engine.ModelInfo{Layers: 2, KVHeads: 2, HeadDim: 32, KVType: "f16", ContextSize: 512, Experts: 8, ExpertsUsed: 2}
	const expert, shared = 98_304, 1_234_944
	return Memory{Info: info, Stats: engine.Stats{ContextUsed: 40, ContextSize: 512, KVPerToken: 512, KVUsed: 40 * 512,
		KVAllocated: 512 * 512, Weights: shared + 2*8*expert, WeightsActive: shared + 2*2*expert, Scratch: 65_536,
		ActiveFormula: fmt.Sprintf("2 layers × 2 of 8 experts × %d B + %d B of attention, norms, router and embeddings = %d B", expert, shared, shared+2*2*expert)}}
}

// TestMemoryMoE: a mixture-of-experts model's memory panel adds what one
// token reads and the formulas of both weight figures, flowed within the
// panel at any width, and the narrow bar names the active bytes; a dense
// model's panel has neither (its golden, TestPanelGoldens, is unchanged).
func TestMemoryMoE(t *testing.T) {
	st := asciiStyles()
	mem := moeMemory()
	for _, w := range []int{16, 36, 56} {
		lines := MemoryLines(st, mem, w)
		text := strings.Join(lines, "\n")
		for _, want := range []string{"active", ExactBytes(mem.Stats.WeightsActive), "weights =", "active =", "KV alloc ="} {
			if !strings.Contains(text, want) {
				t.Errorf("width %d: no %q in\n%s", w, want, text)
			}
		}
		for i, l := range lines {
			if termtext.Width(l) > w && i > 6 { // the size rows are cut by the box
				t.Errorf("width %d: formula row %q is %d cells wide", w, l, termtext.Width(l))
			}
		}
		flat := strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"× 6 unrouted experts × 98,304 B", "2 layers × 2 of 8 experts × 98,304 B", "= " + ExactBytes(mem.Stats.Weights)} {
			if w >= 36 && !strings.Contains(flat, want) {
				t.Errorf("width %d: formula lacks %q:\n%s", w, want, text)
			}
		}
	}
	bar := strings.Join(StatusLines(st, Status{Memory: mem}, 160, 3), "\n")
	if !strings.Contains(bar, "(active "+Bytes(mem.Stats.WeightsActive)+")") {
		t.Errorf("status bar lacks the active weights:\n%s", bar)
	}
	_, dense, _ := goldenData()
	if text := strings.Join(MemoryLines(st, dense, 56), "\n"); strings.Contains(text, "active") {
		t.Errorf("a dense model's panel shows active weights:\n%s", text)
	}
	if bar := strings.Join(StatusLines(st, Status{Memory: dense}, 160, 3), "\n"); strings.Contains(bar, "active") {
		t.Errorf("a dense model's bar shows active weights:\n%s", bar)
	}
}

// TestMemoryMoEGolden pins the mixture-of-experts memory panel.
func TestMemoryMoEGolden(t *testing.T) {
	st := asciiStyles()
	for _, w := range []int{40, 60} {
		box := Box(st, "Memory", MemoryLines(st, moeMemory(), InnerWidth(w)), w)
		t.Run(fmt.Sprintf("width%d", w), func(t *testing.T) { golden.RequireEqual(t, []byte(strings.Join(box, "\n")+"\n")) })
	}
}

// TestRouterDenseLead: a layer without experts (deepseek2's dense lead)
// says so, with the grid and in the list alone, beside layers that route.
func TestRouterDenseLead(t *testing.T) {
	st := asciiStyles()
	layers := append([]engine.Routing{{}}, synthRouting(3, 3, 12, 2)...)
	for _, width := range []int{40, 13} { // 13: no room for a cell per expert
		lines := RouterLines(st, Router{Title: "step 1", Experts: 12, Layers: layers}, width, 10)
		text := strings.Join(lines, "\n")
		var l0 string
		for _, l := range lines {
			if strings.HasPrefix(l, "L0") {
				l0 = l
			}
		}
		if !strings.Contains(l0, "no experts") || strings.Contains(l0, "#") {
			t.Errorf("width %d: layer 0 row %q, want no experts\n%s", width, l0, text)
		}
		if width == 40 && strings.Count(text, "#") != 6 {
			t.Errorf("width %d: %d chosen experts shown, want 3 layers × 2\n%s", width, strings.Count(text, "#"), text)
		}
	}
}
