package plan_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/gguf"
	"vkchat/runtime/plan"
)

var update = flag.Bool("update", false, "rewrite testdata/*.plan from the current plans")

// goldenCtx is the context the goldens are resolved for: larger than every
// synth model's window, so rings show.
const goldenCtx = 512

// plan2026b lists the 2026b/ families (issue 41) that resolve so far;
// each joins as it lands.
var plan2026b = []string{
	"mistral3",
	"deepseek2",
	"gemma4moe",
	"qwen35mtp",
	"nemotron_h",
	"nemotron_h_moe",
	"granitehybrid",
}

// sharedModels are the models the plan is printed for: the demo model, the
// older architectures, the 2026 families and the 2026b ones that have
// landed.
func sharedModels(t *testing.T) []string {
	t.Helper()
	paths := []string{filepath.Join(testenv.RepoDir(), "models", "demo", "stories260K.gguf")}
	dir := testenv.SharedDir()
	if dir == "" {
		t.Log("shared data absent: only the demo model's plan is checked")
		return paths
	}
	pats := []string{"models/synth-*.gguf", "models/2026/synth-*.gguf"}
	for _, a := range plan2026b {
		pats = append(pats, "models/2026b/synth-"+a+"-*.gguf")
	}
	for _, pat := range pats {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	return paths
}

func load(t *testing.T, path string) *arch.Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := arch.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func golden(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".gguf")
	if dir := filepath.Base(filepath.Dir(path)); dir == "2026" || dir == "2026b" {
		base = dir + "-" + base
	}
	return filepath.Join("testdata", base+".plan")
}

// TestPlanGolden prints every shared model's plan and compares it with its
// golden file (go test ./runtime/plan -update rewrites them).
func TestPlanGolden(t *testing.T) {
	for _, path := range sharedModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			p, err := plan.Resolve(load(t, path), goldenCtx)
			if err != nil {
				t.Fatal(err)
			}
			got, file := p.String(), golden(path)
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test ./runtime/plan -update)", err)
			}
			if got != string(want) {
				t.Errorf("plan differs from %s (go test ./runtime/plan -update rewrites it):\n%s", file, got)
			}
		})
	}
}

// TestPlanNamesEveryTensor: each tensor the file holds is read by some op
// (or is a rotation's frequency factors), so a declared feature cannot
// fall out of the plan unnoticed.
func TestPlanNamesEveryTensor(t *testing.T) {
	for _, path := range sharedModels(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := load(t, path)
			p, err := plan.Resolve(m, goldenCtx)
			if err != nil {
				t.Fatal(err)
			}
			text := p.String()
			shared := map[string]bool{}
			for _, l := range p.Layers {
				if i := slices.IndexFunc(l.Ops, func(o plan.Op) bool { a, ok := o.(plan.Attention); return ok && a.Shared }); i >= 0 {
					// a KV-shared layer (Gemma 4) keeps K and V tensors
					// in the file that llama.cpp does not read either
					for _, t := range []string{"attn_k.weight", "attn_v.weight", "attn_k_norm.weight"} {
						shared[fmt.Sprintf("blk.%d.%s", l.Index, t)] = true
					}
				}
			}
			for _, tn := range m.File.Tensors {
				if strings.HasPrefix(tn.Name, "rope_") || shared[tn.Name] {
					continue // frequency factors: the rotations' "frequency factors"
				}
				if !strings.Contains(text, tn.Name+" ") && !strings.Contains(text, tn.Name+"[") {
					t.Errorf("tensor %s is read by no op", tn.Name)
				}
			}
		})
	}
}

// TestPlanCacheMatchesModel: the plan's cache and state slots add up to
// what the declaration's own accounting says (arch.Model.KVBytes and
// StateBytes), at every element size and for contexts inside and outside
// the windows.
func TestPlanCacheMatchesModel(t *testing.T) {
	for _, path := range sharedModels(t) {
		m := load(t, path)
		for _, ctx := range []int{1, 7, 8, 9, 512, 4096} {
			p, err := plan.Resolve(m, ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range []backend.KVType{backend.KVF16, backend.KVF32} {
				elem := kv.Bytes()
				if got, want := p.CacheBytes(kv, kv, ctx, 0), m.KVBytes(ctx, elem); got != want {
					t.Errorf("%s ctx %d: plan cache %d B, model says %d B", filepath.Base(path), ctx, got, want)
				}
			}
			if got, want := p.CacheBytesPerToken(backend.KVF16, backend.KVF16), m.KVBytesPerToken(2); got != want {
				t.Errorf("%s: plan %d B per position, model says %d B", filepath.Base(path), got, want)
			}
			if got, want := p.StateBytes(), m.StateBytes(); got != want {
				t.Errorf("%s: plan state %d B, model says %d B", filepath.Base(path), got, want)
			}
		}
	}
}

// TestPlanAttentionSlots: a layer that owns a cache writes its own slot;
// a KV-shared one reads an earlier layer's and computes no K or V.
func TestPlanAttentionSlots(t *testing.T) {
	for _, path := range sharedModels(t) {
		p, err := plan.Resolve(load(t, path), goldenCtx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range p.Layers {
			for _, op := range l.Ops {
				a, ok := op.(plan.Attention)
				if !ok {
					continue
				}
				if a.Cache < 0 || a.Cache >= len(p.Cache) {
					t.Fatalf("%s layer %d: cache slot %d of %d", filepath.Base(path), l.Index, a.Cache, len(p.Cache))
				}
				owner := p.Cache[a.Cache].Layer
				if a.Shared == (owner == l.Index) || owner > l.Index {
					t.Errorf("%s layer %d: slot %d belongs to layer %d, shared %v", filepath.Base(path), l.Index, a.Cache, owner, a.Shared)
				}
				prods := l.Ops[slices.IndexFunc(l.Ops, func(o plan.Op) bool { _, ok := o.(plan.Products); return ok })].(plan.Products)
				if want := 3; a.Shared {
					want = 1
					if len(prods.Outs) != want {
						t.Errorf("%s layer %d: a shared layer computes %d projections, want Q only", filepath.Base(path), l.Index, len(prods.Outs))
					}
				} else if len(prods.Outs) != want {
					t.Errorf("%s layer %d: %d projections, want Q, K, V", filepath.Base(path), l.Index, len(prods.Outs))
				}
			}
		}
	}
}

func TestResolveRejects(t *testing.T) {
	m := load(t, filepath.Join(testenv.RepoDir(), "models", "demo", "stories260K.gguf"))
	if _, err := plan.Resolve(m, 0); err == nil || !strings.Contains(err.Error(), "context size 0") {
		t.Errorf("ctx 0: %v, want an error naming the context size", err)
	}
	bad := *m
	bad.Layers = slices.Clone(m.Layers)
	bad.Layers[1].Config.KVLayer = 3
	if _, err := plan.Resolve(&bad, 64); err == nil || !strings.Contains(err.Error(), "layer 1") {
		t.Errorf("a layer reading a later layer's cache: %v, want an error naming layer 1", err)
	}
	bad.Layers[1].Config.KVLayer = 1
	bad.Layers[1].Config.Window = -2
	if _, err := plan.Resolve(&bad, 64); err == nil || !strings.Contains(err.Error(), "window -2") {
		t.Errorf("a negative window: %v, want an error naming it", err)
	}
}

// TestCacheFormula: the one-line formula the memory panel and `vkchat
// info` show, as the plan lays the cache out (ring 0) and as the Vulkan
// backend holds it (its rings a prefill chunk beyond the window).
func TestCacheFormula(t *testing.T) {
	for _, c := range []struct {
		model     string
		ctx, ring int
		want      string
	}{
		{"stories260K.gguf", 64, 0, "5 layers × 64 ctx × 4 kv heads × 8 head dim × 2 (K,V) × 2 B = 40960 B"},
		{"synth-gemma3-F32.gguf", 512, 0, "(1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 565248 B"},
		{"synth-gemma3-F32.gguf", 512, 63, "(1 layer × 512 ctx + 5 layers × 71 ring (window 8 + 63)) × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 887808 B"},
		{"synth-gemma3-F32.gguf", 8, 0, "6 layers × 8 ctx × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 49152 B"},
		{"2026/synth-gemma4-F32.gguf", 512, 0, "(1 layer × 512 ctx × 2 kv heads × 128 head dim + 3 layers × 8 window × 2 kv heads × 64 head dim) × 2 (K,V) × 2 B = 536576 B (+ 2 KV-shared layers, no cache of their own)"},
		{"2026/synth-qwen35-F32.gguf", 512, 0, "1 layer × 512 ctx × 2 kv heads × 64 head dim × 2 (K,V) × 2 B = 262144 B"},
	} {
		path := testenv.Model(t, c.model)
		p, err := plan.Resolve(load(t, path), c.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.CacheFormula(backend.KVF16, backend.KVF16, c.ring); got != c.want {
			t.Errorf("%s ctx %d ring +%d:\n got %s\nwant %s", c.model, c.ctx, c.ring, got, c.want)
		}
	}
}

// TestMTPLeavesTheTrunkAlone: a qwen35 file with an MTP block (the 2026
// qwen35 synth plus blk.4, byte for byte the same trunk) resolves into the
// same trunk plan as the file without it, and its MTP plan is one
// attention layer over a cache slot of its own that names every nextn
// tensor.
func TestMTPLeavesTheTrunkAlone(t *testing.T) {
	with, err := plan.Resolve(load(t, testenv.Model(t, "2026b/synth-qwen35mtp-F32.gguf")), goldenCtx)
	if err != nil {
		t.Fatal(err)
	}
	without, err := plan.Resolve(load(t, testenv.Model(t, "2026/synth-qwen35-F32.gguf")), goldenCtx)
	if err != nil {
		t.Fatal(err)
	}
	if without.MTP != nil {
		t.Fatal("a file without an MTP block has an MTP plan")
	}
	mp := with.MTP
	if mp == nil {
		t.Fatal("no MTP plan")
	}
	trunk, whole := *with, with.String()
	trunk.MTP = nil
	if got, want := trunk.String(), without.String(); got != want {
		t.Errorf("the trunk's plan differs from the file without the block:\n%s", got)
	}
	if len(mp.Layers) != 1 || len(mp.Cache) != 1 || len(mp.State) != 0 || mp.MTPBlock != 4 {
		t.Errorf("MTP plan: %d layers, %d cache slots, %d state slots, block %d; want 1, 1, 0, 4", len(mp.Layers), len(mp.Cache), len(mp.State), mp.MTPBlock)
	}
	if _, ok := mp.Input[len(mp.Input)-1].(plan.MTPInput); !ok {
		t.Errorf("the MTP plan's input ends with %T, want the e/h mix", mp.Input[len(mp.Input)-1])
	}
	for _, n := range []string{"blk.4.nextn.eh_proj.weight", "blk.4.nextn.enorm.weight", "blk.4.nextn.hnorm.weight", "blk.4.nextn.shared_head_norm.weight", "blk.4.attn_q.weight"} {
		if !strings.Contains(whole, n+" ") {
			t.Errorf("the plan does not name %s", n)
		}
	}
}
