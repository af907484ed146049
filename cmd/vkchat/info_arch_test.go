package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/arch/synth"
	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// TestInfoShowsArchFeatures: `vkchat info` names each architecture's
// features on the shared synth files, and the KV cache with its window.
func TestInfoShowsArchFeatures(t *testing.T) {
	cases := []struct {
		model string
		want  []string
		not   []string
	}{
		{"synth-gemma3-F32.gguf", []string{
			"block:           pre-norm, post-norm, Q/K RMSNorm per head [128]; FFN gelu-tanh-gated",
			"heads:           4 × head dim 128 = 512 ≠ embd 256",
			"sliding window:  8 positions on layers 0-4 (RoPE base 10000, scale 1); full attention on 5",
			"scales:          embeddings ×16, attention ×0.0883883 on Q",
			"KV cache:        f16: (1 layer × 512 ctx + 5 layers × 8 window) × 2 kv heads × 128 head dim × 2 (K,V) × 2 B = 565248 B",
			"positions ×0.125",
		}, []string{"soft-caps", "no RoPE"}},
		{"synth-gemma2-F32.gguf", []string{"soft-caps:       attention 4·tanh(s/4), final logits 8·tanh(x/8)", "on layers 0 "}, nil},
		{"synth-smollm3-F32.gguf", []string{"no RoPE:         layers 3", "block:           pre-norm; FFN silu-gated"}, []string{"sliding window"}},
		{"synth-olmo2-F32.gguf", []string{"block:           post-norm, Q/K RMSNorm over the full width [256]/[128]; FFN silu-gated"}, nil},
		{"synth-granite-F32.gguf", []string{"scales:          embeddings ×12, residual branches ×0.22, attention ×0.0078125 on scores, logits ×0.125"}, nil},
		{"synth-phi3-F32.gguf", []string{"attention ×0.125 on Q"}, []string{"sliding window", "layer kinds", "shared KV", "per-layer embd"}},
		{"2026/synth-lfm2-F32.gguf", []string{
			"KV cache:        f16: 2 layers × 512 ctx × 2 kv heads × 64 head dim × 2 (K,V) × 2 B = 524288 B",
			"layer kinds:     4 shortconv + 2 attention (ssAssA; A attention)",
			"recurrent state: 8.0 KiB: 4 shortconv layers × (3−1) taps × 256 embd × 4 B = 8192 B, whatever the context",
			"checkpoints:     up to 8 copies of the state on the CPU backend = 64.0 KiB at most",
			"+ recurrent state 8.0 KiB",
		}, []string{"no RoPE"}},
		{"2026b/synth-qwen35mtp-F32.gguf", []string{
			"layers:          4 (embd 256",
			"mtp head:        blk.4 (NextN): drafts the token after next from a token and the trunk's hidden state; one attention layer with a KV cache of its own (2 kv heads × 64 head dim per position), head norm blk.4.nextn.shared_head_norm.weight, output output.weight",
		}, nil},
		{"2026/synth-qwen35-F32.gguf", nil, []string{"mtp head"}},
		{"2026/synth-gemma4-F32.gguf", []string{
			"block:           pre-norm, post-norm, Q/K RMSNorm per head [64/128]; FFN gelu-tanh-gated",
			"layer kinds:     layers 0-2, 4 (sliding 8): head dim 64, 2 kv heads, ff 256, RoPE 64 dims base 10000; layers 3, 5 (full): head dim 128, 2 kv heads, ff 256, RoPE 128 dims base 1e+06 × rope_freqs",
			"shared KV:       2 layers compute only Q and read an earlier layer's cache (4→2, 5→3); they hold none",
			"per layer:       V RMS-normalized (no weight), stream × layer_output_scale after each layer",
			"per-layer embd:  32 per layer × 6 layers for each of 512 tokens: F32 table 384.0 KiB (512 tokens × 192 values × 768 B/row = 393216 B)",
			"soft-caps:       final logits 15·tanh(x/15)",
			"scales:          embeddings ×16, attention ×1 on scores",
			"KV cache:        f16: (1 layer × 512 ctx × 2 kv heads × 128 head dim + 3 layers × 8 window × 2 kv heads × 64 head dim) × 2 (K,V) × 2 B = 536576 B (+ 2 KV-shared layers, no cache of their own)",
		}, nil},
		{"2026b/synth-deepseek2-F32.gguf", []string{
			"attention:       multi-head latent attention (MLA): q_lora 96, kv_lora 64, per head 32 nope + 16 rope, value 32; absorbed: MQA over one cached row of 64 latent + 16 rope a position, scale 0.22944275 (YaRN's mscale² / √48)",
			"experts:         2 of 8 per token (ff 64 each), sigmoid → top-k within the best 2 of 4 groups (top-2 sums) → renormalize → × 1.8 (chosen by probability + exp_probs_b, weighted without it), + a shared expert (ff 64)",
			"dense lead:      layer 0 keeps a dense FFN (ff 256); experts from layer 1 on",
			"KV cache:        f16: 4 layers × 512 ctx × (64 latent + 16 rope) × 2 B (keys only: the values are the latent) = 327680 B; plain multi-head attention would cache 320 values a position, not 80",
		}, []string{"2 (K,V)"}},
		{"2026b/synth-gemma4moe-F32.gguf", []string{
			"experts:         2 of 4 per token (ff 64 each), softmax → top-k → renormalize",
			"expert gating:   beside the dense FFN on layers 0-5; router reads rms(x)/√256 ⊙ ffn_gate_inp.scale; each expert's output × its ffn_down_exps.scale; gate|up fused per expert",
			"layer kinds:     layers 0-2, 4 (sliding 8): head dim 32, 2 kv heads, ff 96 beside 2 of 4 experts (ff 64), RoPE 32 dims base 10000; layers 3, 5 (full): head dim 64, 1 kv heads, V = K's projection (no attn_v), ff 96 beside 2 of 4 experts (ff 64), RoPE 64 dims base 1e+06 × rope_freqs",
		}, []string{"shared KV", "per-layer embd"}},
		{"2026b/synth-nemotron_h-F32.gguf", []string{
			"block:           pre-norm; FFN relu², no gate",
			"KV cache:        f16: 1 layer × 512 ctx × 2 kv heads × 64 head dim × 2 (K,V) × 2 B = 262144 B",
			"layer kinds:     4 mamba2 + 3 ffn + 1 attention (mfmfmAfm; A attention)",
			"mamba2:          in-proj → z 256 | xBC 384 (x 256, B and C 2 groups × 32) | dt 8; causal conv of 4 taps + bias, SiLU; 8 heads of 32 scan a 32-wide state (heads 4 per B/C group): decay e^(softplus(dt + dt_bias)·A), D skip; y × SiLU(z), RMS-normed in 2 groups of 128",
			"recurrent state: 146.0 KiB: 4 Mamba2 layers × ((4−1) taps × 384 conv channels + 8 heads × 32 head dim × 32 state) × 4 B = 149504 B, whatever the context",
			"no RoPE:         layers 5",
		}, []string{"gated", "experts", "ff 0"}},
		{"2026b/synth-nemotron_h_moe-F32.gguf", []string{
			"experts:         2 of 8 per token (ff 64 each), sigmoid → top-k → renormalize → × 2.5 (chosen by probability + exp_probs_b, weighted without it), + a shared expert (ff 128)",
			"layer kinds:     4 mamba2 + 3 ffn + 1 attention (mfmfmAfm; A attention)",
		}, nil},
		{"2026b/synth-granitehybrid-F32.gguf", []string{
			"experts:         2 of 8 per token (ff 8 each), softmax → top-k → renormalize, + a shared expert (ff 16)",
			"layer kinds:     4 mamba2 + 2 attention (mmAmmA; A attention)",
			"recurrent state: 286.0 KiB: 4 Mamba2 layers × ((4−1) taps × 640 conv channels + 8 heads × 64 head dim × 32 state) × 4 B = 292864 B, whatever the context",
			"scales:          embeddings ×12, residual branches ×0.22, attention ×0.03125 on scores, logits ×0.16666667",
		}, []string{"exp_probs_b"}},
		{"2026b/synth-mistral3-F32.gguf", []string{
			"architecture:    mistral3",
			"attention:       temperature tuning: Q × (1 + 0.1·ln(1 + ⌊pos/8⌋)) after RoPE",
			"heads:           4 × head dim 96 = 384 ≠ embd 256",
			"YaRN ×0.0625 from an original context of 8",
			"scales:          attention ×0.102062 on scores",
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			var out bytes.Buffer
			if err := runInfo(context.Background(), []string{"--ctx", "512", testenv.Model(t, c.model)}, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("missing %q in\n%s", w, out.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("unexpected %q in\n%s", n, out.String())
				}
			}
		})
	}
}

// TestInfoContext: the memory estimate is at the context the chat would
// open (the model's trained one, up to 4096) unless --ctx says otherwise,
// and --ctx beyond the trained context is warned about.
func TestInfoContext(t *testing.T) {
	vocab, err := gguf.Open(testenv.Shared(t, "vocab/ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer vocab.Close()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	// Trained for 256 positions.
	if err := synth.Write(path, synth.Shapes["tiny"], synth.Options{Type: ggml.F32, Vocab: vocab, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args       []string
		want, warn string
	}{
		{nil, "at ctx 256 =", ""},
		{[]string{"--ctx", "128"}, "at ctx 128 =", ""},
		{[]string{"--ctx", "2048"}, "at ctx 2048 =", "warning: the context (2048) is larger than the 256 tokens the model was trained on"},
	}
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		if err := runInfo(context.Background(), append(tc.args, path), &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: output lacks %q:\n%s", tc.args, tc.want, out.String())
		}
		if (tc.warn == "") != (errOut.Len() == 0) || !strings.Contains(errOut.String(), tc.warn) {
			t.Errorf("%v: stderr %q, want %q", tc.args, errOut.String(), tc.warn)
		}
	}
}
