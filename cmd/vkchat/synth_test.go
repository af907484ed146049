package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/gguf"
	"vkchat/runtime/vk/vulkan"
)

// TestSynthBenchShapes: each bench shape of the 2026b MoE families,
// narrowed by synth's flags to a tiny width but keeping its layer layout,
// expert count and top-k, is written by `vkchat synth` with its real
// vocabulary, loads with the layout its real model has, and generates on
// the CPU and Vulkan backends through `vkchat bench`.
func TestSynthBenchShapes(t *testing.T) {
	for _, c := range []struct {
		shape, vocab string
		narrow       []string
		check        func(m *arch.Model) error
	}{
		{"gemma4moe", "ggml-vocab-gemma3.gguf", []string{"--embd", "64", "--ff", "64", "--heads", "2", "--kv-heads", "2", "--head-dim", "64", "--expert-ff", "32"}, checkGemma4MoE},
		{"nemotron_h_moe", "ggml-vocab-llama3.gguf", []string{"--embd", "64", "--ff", "32", "--heads", "2", "--kv-heads", "1", "--expert-ff", "32"}, checkNemotronMoE},
		{"deepseek2", "ggml-vocab-qwen3.gguf", []string{"--embd", "64", "--ff", "64", "--heads", "2", "--expert-ff", "32"}, checkGLMFlash},
	} {
		t.Run(c.shape, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), c.shape+".gguf")
			args := append([]string{"--shape", c.shape, "--type", "Q4_0", "--vocab", testenv.Shared(t, "vocab/"+c.vocab), "--out", path}, c.narrow...)
			var out, errb bytes.Buffer
			if err := runSynth(context.Background(), args, &out, &errb); err != nil {
				t.Fatalf("synth: %v\n%s", err, errb.String())
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := arch.Load(f)
			if err == nil {
				want := synth.Shapes[c.shape]
				switch {
				case m.Arch != want.Arch:
					err = fmt.Errorf("architecture %s, want the shape's %s", m.Arch, want.Arch)
				case m.MoE.Experts != want.Experts || m.MoE.ExpertsUsed != want.ExpertsUsed:
					err = fmt.Errorf("%d experts, %d used; want %d, %d", m.MoE.Experts, m.MoE.ExpertsUsed, want.Experts, want.ExpertsUsed)
				default:
					err = c.check(m)
				}
			}
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, backendName := range []string{"cpu", "vulkan"} {
				var out, errb bytes.Buffer
				err := runBench(context.Background(), []string{"--model", path, "--backend", backendName, "-p", "8", "-n", "4", "-r", "1", "--json"}, &out, &errb)
				if backendName == "vulkan" && errors.Is(err, vulkan.ErrNoVulkan) {
					t.Logf("vulkan: no device (%v)", err)
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v\n%s", backendName, err, errb.String())
				}
				var rows []benchResult
				if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
					t.Fatalf("%s: %v\n%s", backendName, err, out.String())
				}
				if len(rows) != 2 || rows[1].Test != "tg4" || len(rows[1].Samples) != 1 || !(rows[1].TokensPerSecond > 0) {
					t.Errorf("%s: rows %+v, want pp8 then tg4 with one sample", backendName, rows)
				}
			}
		})
	}
}

// checkGemma4MoE: Gemma 4 26B-A4B's layout — five sliding layers then a
// full one with a quarter of the KV heads (at least one) and V from K, no
// per-layer embeddings or KV sharing, and on every layer the dense MLP
// beside fused gate|up experts with their router scale, output scales
// and norms.
func checkGemma4MoE(m *arch.Model) error {
	if m.PLE != nil {
		return fmt.Errorf("per-layer embeddings %+v, want none", m.PLE)
	}
	for l := range m.Layers {
		L := &m.Layers[l]
		full := (l+1)%6 == 0
		wantKV := 2
		if full {
			wantKV = 1
		}
		x := L.Experts
		switch {
		case (L.Config.Window == 0) != full || L.Config.KVHeads != wantKV || L.Config.KVLayer != l:
			return fmt.Errorf("layer %d: window %d, %d KV heads, reads layer %d's cache; want full %v, %d, its own", l, L.Config.Window, L.Config.KVHeads, L.Config.KVLayer, full, wantKV)
		case full != (L.Wv.Name == L.Wk.Name):
			return fmt.Errorf("layer %d: V is %s, K %s (full layers have no V)", l, L.Wv.Name, L.Wk.Name)
		case L.Gate.Data == nil || L.PostDenseNorm == nil:
			return fmt.Errorf("layer %d: no dense MLP beside the experts", l)
		case x == nil || !x.FusedGateUp || x.RouterScale == nil || x.DownScale == nil || x.PreNorm == nil || x.PostNorm == nil:
			return fmt.Errorf("layer %d: experts %+v, want fused gate|up with router and output scales and both norms", l, x)
		}
	}
	return nil
}

// checkNemotronMoE: Nemotron 3 Nano's layer pattern, sigmoid routing with
// a selection bias, and an ungated shared expert on each MoE layer.
func checkNemotronMoE(m *arch.Model) error {
	names := map[byte]string{'M': "mamba2", 'E': "ffn", '*': "attention"}
	pattern := synth.Shapes["nemotron_h_moe"].Pattern
	var got, want []string
	for l := range m.Layers {
		got = append(got, m.Layers[l].Config.Kind.String())
		want = append(want, names[pattern[l]])
		if x := m.Layers[l].Experts; pattern[l] == 'E' && (x == nil || x.Shared == nil || x.SelectBias == nil || x.Gate.Data != nil) {
			return fmt.Errorf("layer %d: experts %+v, want ungated ones with a selection bias and a shared expert", l, x)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("layer kinds %v, want %v", got, want)
	}
	if e := m.MoE; e.Gating != arch.GatingSigmoid || !e.Norm || e.Scale != 2.5 {
		return fmt.Errorf("routing %+v, want sigmoid, renormalised, × 2.5", e)
	}
	return nil
}

// checkGLMFlash: GLM-4.7-Flash's layout — latent attention on every
// layer, one dense lead layer, then routed experts with a selection bias
// and a shared expert, sigmoid routing with no group limit.
func checkGLMFlash(m *arch.Model) error {
	for l := range m.Layers {
		L := &m.Layers[l]
		switch {
		case L.MLA == nil:
			return fmt.Errorf("layer %d: no latent attention", l)
		case l == 0 && (L.Experts != nil || !L.Config.DenseFFN):
			return fmt.Errorf("layer 0: experts %+v, want the dense lead", L.Experts)
		case l > 0 && (L.Experts == nil || L.Experts.Shared == nil || L.Experts.SelectBias == nil):
			return fmt.Errorf("layer %d: experts %+v, want routed experts with a selection bias and a shared expert", l, L.Experts)
		}
	}
	if e := m.MoE; e.Gating != arch.GatingSigmoid || !e.Norm || e.Scale != 1.8 || e.Groups > 1 {
		return fmt.Errorf("routing %+v, want sigmoid, renormalised, × 1.8, no groups", e)
	}
	return nil
}
