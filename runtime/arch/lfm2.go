package arch

import (
	"fmt"

	"vkchat/runtime/ggml"
	"vkchat/runtime/gguf"
)

// LFM2 (Liquid AI; llama.cpp models/lfm2.cpp) mixes two kinds of layer:
// most are short convolutions, the rest GQA attention with per-head Q/K
// RMS norm and NeoX RoPE. attention.head_count_kv is a per-layer array, and
// a 0 entry marks a convolution layer. Every layer has the pre-norm SwiGLU
// FFN. The final norm is stored as token_embd_norm (llama.cpp's
// LLM_TENSOR_OUTPUT_NORM is named so for this architecture).
//
// A short-convolution layer, on a = rms(x)·attn_norm:
//
//	b, c, u = split3(in_proj·a)          (each embd wide, in that order)
//	y[t] = Σ_k conv[k] · (b⊙u)[t-L+1+k]  (per channel, k = 0..L-1, no activation)
//	x += out_proj·(c ⊙ y)
//
// so each layer keeps the last L-1 values of b⊙u per channel: its state.
func init() {
	register(Arch{
		Name: "lfm2", NeoX: true, OutputNorm: "token_embd_norm.weight", ShortConv: true,
		Block: Block{PreNorm: true, QKNorm: QKNormHead, Act: ActSiLU},
	})
}

// ShortConv is a short-convolution layer's mixer weights.
type ShortConv struct {
	InProj  Weight // [embd x 3·embd]: the b, c and u rows
	Conv    Weight // F32 [L x embd]: per channel, the L taps, oldest first
	OutProj Weight // [embd x embd]
}

// shortConvTensors is the fewest tensors a layer of a ShortConv
// architecture has: a convolution layer's attn_norm, in_proj, conv,
// out_proj, ffn_norm, gate, up and down.
const shortConvTensors = 8

// maxShortConvL bounds the kernel length: real LFM2 uses 3, and the state
// and the per-token loop scale with it.
const maxShortConvL = 64

// hybridKV checks the per-layer attention.head_count_kv array (a scalar
// means every layer attends; perLayerSizes marks the 0 entries as
// convolution layers) and reads the kernel length. It returns the KV
// heads of the attention layers, which must agree: the KV cache has one
// layout.
func hybridKV(l *loader, layers int) (kvHeads, convL int) {
	if l.err != nil {
		return 0, 0
	}
	key := l.key("attention.head_count_kv")
	bad := func(k, msg string) {
		l.err = &gguf.FormatError{Path: l.f.Path, Field: fmt.Sprintf("key %q", k), Msg: msg}
	}
	convL = l.uint("shortconv.l_cache", 0, true)
	if l.err != nil {
		return 0, 0
	}
	if convL < 2 || convL > maxShortConvL {
		bad(l.key("shortconv.l_cache"), fmt.Sprintf("%d must be between 2 and %d", convL, maxShortConvL))
		return 0, 0
	}
	// llama.cpp builds lfm2 with sliding-window attention layers when the
	// file sets a window (its iswa variant); which layers slide is not
	// declared here yet, and ignoring the key would attend too far.
	if swa := l.key("attention.sliding_window"); l.f.Has(swa) {
		bad(swa, "sliding-window attention on lfm2's attention layers is not supported yet")
		return 0, 0
	}
	if !l.f.Has(key) {
		bad(key, "missing")
		return 0, 0
	}
	per := l.uints("attention.head_count_kv", layers, 0)
	if l.err != nil {
		return 0, 0
	}
	for i, n := range per {
		switch {
		case n > 0 && kvHeads != 0 && n != kvHeads:
			bad(key, fmt.Sprintf("entry %d is %d where an earlier attention layer has %d; the attention layers must agree", i, n, kvHeads))
			return 0, 0
		case n > 0:
			kvHeads = n
		}
	}
	if kvHeads == 0 {
		bad(key, "every entry is 0: a model without attention layers is not supported")
	}
	return kvHeads, convL
}

// shortConvLayer locates a convolution layer's weights: the mixer, and the
// same pre-norms and dense FFN an attention layer has.
func (w *weights) shortConvLayer(l *Layer, p string, cfg *Config) {
	e, ff := cfg.Embd, cfg.FF
	l.AttnNorm = w.vector(p+"attn_norm.weight", e)
	sc := &ShortConv{
		InProj:  w.matrix(p+"shortconv.in_proj.weight", e, 3*e),
		Conv:    w.matrix(p+"shortconv.conv.weight", cfg.ShortConvL, e),
		OutProj: w.matrix(p+"shortconv.out_proj.weight", e, e),
	}
	if w.err == nil && sc.Conv.Type != ggml.F32 {
		// llama.cpp's ssm_conv reads F32 only; its quantizer leaves this
		// tensor alone.
		w.err = tensorErr(w.f, sc.Conv.Name, fmt.Sprintf("must be F32, found %s", sc.Conv.Type))
	}
	l.ShortConv = sc
	l.FFNNorm = w.vector(p+"ffn_norm.weight", e)
	l.Gate = w.matrix(p+"ffn_gate.weight", e, ff)
	l.Up = w.matrix(p+"ffn_up.weight", e, ff)
	l.Down = w.matrix(p+"ffn_down.weight", ff, e)
}
