package plan

import (
	"fmt"

	"vkchat/runtime/arch"
)

// MTPInput mixes each row's embedded token (X) with the hidden state the
// row is given beside its token (the trunk's stream after its final norm
// at the position before; or the head's own, after its norm, for a
// chained draft) into the MTP layer's input:
// X = EHProj · [rms(X)·ENorm | rms(h)·HNorm], the embedding half first
// (llama.cpp src/models/qwen35.cpp:486-627).
type MTPInput struct {
	EHProj       Weight // [2·embd x embd]
	ENorm, HNorm Weight // [embd]
	Eps          float32
}

func (MTPInput) isOp() {}

// resolveMTP resolves a model's MTP head (arch.MTP) as a plan of its own:
// the embedding and the e/h mix as its input, its one attention layer over
// a cache slot of its own, its norm and the shared output as its head. An
// executor runs it beside the trunk's plan, which it leaves untouched.
func resolveMTP(m *arch.Model, ctx int) (*Plan, error) {
	sub := m.MTPModel()
	if sub == nil {
		return nil, nil
	}
	mp, err := Resolve(sub, ctx)
	if err != nil {
		return nil, fmt.Errorf("MTP block blk.%d: %w", m.MTP.Block, err)
	}
	if len(mp.Layers) != 1 || mp.Layers[0].Mixer != MixAttention || len(mp.Cache) != 1 {
		return nil, fmt.Errorf("plan: MTP block blk.%d: want one attention layer with a cache of its own", m.MTP.Block)
	}
	x := m.MTP
	mp.Input = append(mp.Input, MTPInput{EHProj: x.EHProj, ENorm: x.ENorm, HNorm: x.HNorm, Eps: m.NormEps})
	mp.MTPBlock = x.Block
	return mp, nil
}
