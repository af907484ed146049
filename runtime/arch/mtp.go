package arch

import "fmt"

// MTP is a Qwen3.5/3.6 multi-token-prediction (NextN) head: the block a
// file carries after its trunk (blk.N, N the trunk's layer count) that
// drafts the token after next from a token and the trunk's hidden state
// (llama.cpp src/models/qwen35.cpp:486-627; ../shared/docs/
// architectures-2026b.md, "Multi-token prediction"). For a row at
// position p with e = Embed[x_p] and h = the trunk's hidden state at p-1
// (its last layer's output after the output norm, as llama.cpp hands it
// over; see runtime/backend's MTPBackend):
//
//	u = EHProj · [rms(e)·ENorm | rms(h)·HNorm]   (the embedding half first)
//	y = Layer(u) at position p, over a KV cache of its own
//	logits = Output · rms(y)·HeadNorm
//
// and rms(y)·HeadNorm is the h of the next chained draft. The main pass never runs it,
// so its presence cannot change the trunk's logits.
type MTP struct {
	Block        int    // the block index in the file (blk.N)
	Layer        Layer  // one full-attention layer of the trunk's recipe; Config.KVLayer 0: its cache is its own
	EHProj       Weight // nextn.eh_proj [2·embd x embd]
	ENorm, HNorm Weight // nextn.enorm, nextn.hnorm [embd]
	HeadNorm     Weight // nextn.shared_head_norm, else the trunk's output norm
	Embed        Weight // nextn.embed_tokens, else token_embd
	Output       Weight // nextn.shared_head_head, else the trunk's output
}

// mtp locates the MTP block when the declaration allows one and the file
// carries exactly one (llama.cpp's MTP graph asserts one,
// qwen35.cpp:490). A file that counts a block but has no nextn.eh_proj
// loads without the head, its trunk unchanged; one that has eh_proj must
// have the rest.
func (w *weights) mtp(m *Model, a Arch) {
	if w.err != nil || m.NextN != 1 {
		return
	}
	c := &m.Config
	n := len(m.Layers)
	p := fmt.Sprintf("blk.%d.", n)
	if _, ok := w.f.Tensor(p + "nextn.eh_proj.weight"); !ok {
		return
	}
	e := c.Embd
	x := &MTP{Block: n}
	x.Layer.Config = LayerConfig{Kind: KindAttention, Rope: true, RopeBase: c.Rope.Base, RopeScale: c.Rope.Scale,
		HeadDim: c.HeadDim, KVHeads: c.KVHeads, FF: c.FF, RopeDims: c.Rope.Dims, KVLayer: n}
	w.layer(&x.Layer, n, a, c, false)
	x.Layer.Config.KVLayer = 0
	x.EHProj = w.matrix(p+"nextn.eh_proj.weight", 2*e, e)
	x.ENorm = w.vector(p+"nextn.enorm.weight", e)
	x.HNorm = w.vector(p+"nextn.hnorm.weight", e)
	x.HeadNorm = m.OutputNorm
	if _, ok := w.f.Tensor(p + "nextn.shared_head_norm.weight"); ok {
		x.HeadNorm = w.vector(p+"nextn.shared_head_norm.weight", e)
	}
	x.Embed = m.TokenEmbd
	if _, ok := w.f.Tensor(p + "nextn.embed_tokens.weight"); ok {
		x.Embed = w.matrix(p+"nextn.embed_tokens.weight", e, c.Vocab)
	}
	x.Output = m.Output
	if _, ok := w.f.Tensor(p + "nextn.shared_head_head.weight"); ok {
		x.Output = w.matrix(p+"nextn.shared_head_head.weight", e, c.Vocab)
	}
	if w.err == nil {
		m.MTP = x
	}
}

// MTPModel is the MTP head as a one-layer model of its own, for
// runtime/plan to resolve like any other: the trunk's numbers, no
// recurrent layers, the head's embedding, layer, norm and output. The
// input it adds before the layer (the e/h mix) is the plan's to say.
// Nil without a head.
func (m *Model) MTPModel() *Model {
	x := m.MTP
	if x == nil {
		return nil
	}
	c := m.Config
	c.Layers, c.NextN = 1, 0
	c.DeltaNet, c.FullAttnEvery = DeltaNetConfig{}, 0
	c.ShortConvL, c.ShortConvLayers = 0, 0
	sub := &Model{Config: c, Name: m.Name, TokenEmbd: x.Embed, OutputNorm: x.HeadNorm, Output: x.Output,
		Layers: []Layer{x.Layer}}
	sub.Tied = len(x.Output.Data) > 0 && len(x.Embed.Data) > 0 && &x.Output.Data[0] == &x.Embed.Data[0]
	return sub
}
