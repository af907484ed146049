package plan

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"vkchat/runtime/backend"
)

// String is the plan as `vkchat info --plan` prints it: the input ops, a
// group of lines per layer, the head, then the rotations, cache slots and
// state slots the ops refer to.
func (p *Plan) String() string {
	var b strings.Builder
	_ = p.Write(&b)
	return b.String()
}

// Write prints the plan to w.
func (p *Plan) Write(w io.Writer) error {
	pr := printer{w: w}
	pr.line("plan %s · ctx %d · embd %d · vocab %d · %d layers", p.Arch, p.Context, p.Embd, p.Vocab, len(p.Layers))
	p.write(&pr)
	if p.MTP != nil {
		pr.line("mtp · blk.%d · drafts the token after next from a token and the trunk's hidden state; a plan and a cache of its own", p.MTP.MTPBlock)
		sub := printer{w: w, indent: "  "}
		p.MTP.write(&sub)
		pr.err = sub.err
	}
	return pr.err
}

// write prints the plan's groups and slots (not its first line).
func (p *Plan) write(pr *printer) {
	pr.group("input", p.Input)
	for _, l := range p.Layers {
		pr.group(fmt.Sprintf("layer %d · %s", l.Index, l.Mixer), l.Ops)
	}
	pr.group("head", p.Head)
	if len(p.Rotations) > 0 {
		pr.line("rotations")
		for i, r := range p.Rotations {
			pr.line("  %d  %s", i, rotation(r))
		}
	}
	if len(p.Cache) > 0 {
		pr.line("cache slots (%s per position at 2 B)", bytesPer(p.CacheBytesPerToken(backend.KVF16, backend.KVF16)))
		for i, s := range p.Cache {
			span := "full"
			if s.Window > 0 {
				span = fmt.Sprintf("window %d", s.Window)
			}
			if s.Latent > 0 {
				pr.line("  %d  layer %d · mla: keys only, %d latent + %d rope · %s · %d positions", i, s.Layer, s.Latent, s.HeadDim-s.Latent, span, s.Positions(p.Context, 0))
				continue
			}
			pr.line("  %d  layer %d · %d kv heads × %d head dim · %s · %d positions", i, s.Layer, s.KVHeads, s.HeadDim, span, s.Positions(p.Context, 0))
		}
	}
	if len(p.State) > 0 {
		pr.line("state slots (F32, %d B in all)", p.StateBytes())
		for i, s := range p.State {
			what := fmt.Sprintf("conv %d floats", s.ConvFloats)
			if s.MatrixFloats > 0 && s.Mixer == MixMamba2 {
				what += fmt.Sprintf(" + scan %d floats", s.MatrixFloats)
			} else if s.MatrixFloats > 0 {
				what += fmt.Sprintf(" + matrices %d floats", s.MatrixFloats)
			}
			pr.line("  %d  layer %d · %s · %s", i, s.Layer, s.Mixer, what)
		}
	}
}

type printer struct {
	w      io.Writer
	indent string // before every line (a nested plan's)
	err    error
}

func (pr *printer) line(format string, args ...any) {
	if pr.err == nil {
		_, pr.err = fmt.Fprintf(pr.w, pr.indent+format+"\n", args...)
	}
}

func (pr *printer) group(title string, ops []Op) {
	pr.line("%s", title)
	for _, op := range ops {
		kind, what := describe(op)
		pr.line("  %-13s %s", kind, what)
	}
}

// describe is an op's kind and its fields in one line.
func describe(op Op) (string, string) {
	switch o := op.(type) {
	case Embed:
		return "embed", weight(o.Table) + scaled(o.Scale)
	case PerLayerInputs:
		return "ple-inputs", fmt.Sprintf("width %d · %s · %s · %s", o.PLE.Width, weight(o.PLE.Token), weight(o.PLE.Proj), weight(o.PLE.Norm))
	case Norm:
		w := "no weight"
		if o.Weight != nil {
			w = weight(*o.Weight)
		}
		rows := fmt.Sprintf("%d", o.Width)
		if o.Row != o.Width {
			rows = fmt.Sprintf("%d in rows of %d", o.Width, o.Row)
		}
		return "rms-norm", fmt.Sprintf("%s → %s · %s · %s · eps %s", o.In, o.Out, rows, w, num(o.Eps))
	case Products:
		var outs []string
		for _, pd := range o.Outs {
			s := fmt.Sprintf("%s = %s", pd.Out, weight(pd.W))
			if pd.Bias != nil {
				s += " + " + weight(*pd.Bias)
			}
			if pd.GatedHeads {
				s += fmt.Sprintf(" (per head of %d: q | gate)", pd.HeadDim)
			}
			outs = append(outs, s)
		}
		return "products", fmt.Sprintf("of %s: %s", o.In, strings.Join(outs, "; "))
	case Rope:
		return "rope", fmt.Sprintf("%s · head %d · rotation %d", bufs(o.Bufs), o.HeadDim, o.Table)
	case Scale:
		return "scale", fmt.Sprintf("%s × %s", o.Buf, num(o.By))
	case PositionScale:
		s := fmt.Sprintf("%s × (1 + %s·ln(1 + ⌊pos/%d⌋))", o.Buf, num(o.T.Beta), o.T.Length)
		if o.T.Offset != 0 {
			s = fmt.Sprintf("%s × (1 + %s·ln(1 + ⌊(pos+%s)/%d⌋))", o.Buf, num(o.T.Beta), num(o.T.Offset), o.T.Length)
		}
		return "temperature", s
	case Softcap:
		return "softcap", fmt.Sprintf("%s → %s·tanh(%s/%s)", o.Buf, num(o.Cap), o.Buf, num(o.Cap))
	case Attention:
		s := fmt.Sprintf("%d heads / %d kv · head %d · scale %s", o.Heads, o.KVHeads, o.HeadDim, num(o.Scale))
		if o.Softcap != 0 {
			s += " · softcap " + num(o.Softcap)
		}
		if o.Window > 0 {
			s += fmt.Sprintf(" · window %d", o.Window)
		} else {
			s += " · causal"
		}
		if o.Sinks != nil {
			s += " · sinks " + weight(*o.Sinks)
		}
		if o.Shared {
			s += fmt.Sprintf(" · reads cache slot %d (shared)", o.Cache)
		} else {
			s += fmt.Sprintf(" · writes and reads cache slot %d", o.Cache)
		}
		return "attention", s
	case MLA:
		m, w := o.Shape, o.W
		q := weight(w.Q)
		if w.QA != nil {
			q = fmt.Sprintf("%s·rms(%s·%s)·%s", weight(w.Q), weight(*w.QA), o.In, weight(*w.QANorm))
		}
		return "mla", fmt.Sprintf("%s → attn · %d heads · q %s [nope %d | rope %d] · kv %s [latent %d | rope %d], rms·%s · absorbed %s, %s · v %d · scale %s · rotation %d · writes and reads cache slot %d (1 row of %d per position)",
			o.In, o.Heads, q, m.Nope, m.Rope, weight(w.KVA), m.KVLora, m.Rope, weight(w.KVANorm), weight(w.KB), weight(w.VB), m.V, num(o.Scale), o.Table, o.Cache, m.CacheRow())
	case AttnGate:
		return "attn-gate", fmt.Sprintf("attn ×= σ(gate) · %d", o.Width)
	case GLU:
		if !o.Act.Gated() {
			return "act", fmt.Sprintf("gate = %s(gate) · %d (no up)", o.Act, o.Width)
		}
		return "glu", fmt.Sprintf("gate = %s(gate) · up · %d", o.Act, o.Width)
	case MoE:
		gating := o.Gating.String()
		if o.Rule.Gating == o.Gating {
			gating = o.Rule.String()
		}
		added := ""
		if o.Add {
			added = " (added)"
		}
		s := fmt.Sprintf("%s → %s%s · %d of %d experts of ff %d · %s · %s · router %s", o.In, o.Out, added, o.K, o.Experts, o.FF, gating, o.Act, weight(o.Router))
		if o.RouterBias != nil {
			s += " + " + weight(*o.RouterBias)
		}
		if ri := o.RouterIn; ri != nil {
			s += fmt.Sprintf(" of rms(%s) × %s ⊙ %s", ri.From, num(ri.Scale), weight(ri.Weight))
		}
		if o.SelectBias != nil {
			s += " · choosing by + " + weight(*o.SelectBias)
		}
		if o.FusedGateUp {
			s += fmt.Sprintf(" · banks %s (gate | up), %s", weight(o.Gate), weight(o.Down))
		} else if o.Gate.Data == nil && !o.Act.Gated() {
			s += fmt.Sprintf(" · banks %s, %s", weight(o.Up), weight(o.Down))
		} else {
			s += fmt.Sprintf(" · banks %s, %s, %s", weight(o.Gate), weight(o.Up), weight(o.Down))
		}
		for _, b := range []*Weight{o.GateBias, o.UpBias, o.DownBias} {
			if b != nil {
				s += " + " + weight(*b)
			}
		}
		if o.DownScale != nil {
			s += " · each × " + weight(*o.DownScale)
		}
		if o.PostNorm != nil {
			s += " · sum rms-normed · " + weight(*o.PostNorm)
		}
		return "moe", s
	case SharedExpert:
		if o.Scale.Data == nil {
			ffn := fmt.Sprintf("%s-glu %s, %s, %s", o.Act, weight(o.Gate), weight(o.Up), weight(o.Down))
			if !o.Act.Gated() {
				ffn = fmt.Sprintf("%s %s, %s", o.Act, weight(o.Up), weight(o.Down))
			}
			return "shared-expert", fmt.Sprintf("%s → %s += %s", o.In, o.Out, ffn)
		}
		return "shared-expert", fmt.Sprintf("%s → %s += σ(%s·%s) × silu-glu %s, %s, %s", o.In, o.Out, weight(o.Scale), o.In, weight(o.Gate), weight(o.Up), weight(o.Down))
	case Mamba2:
		w, sh := o.W, o.Shape
		bias := ""
		if w.ConvBias != nil {
			bias = " + " + weight(*w.ConvBias)
		}
		return "mamba2", fmt.Sprintf("%s → %s · conv %d over %d · inner %d · %d heads of %d · state %d · %d groups · state slot %d · %s, %s%s, %s",
			o.In, o.Out, sh.ConvKernel, sh.ConvChannels(), sh.Inner, sh.Heads, sh.HeadDim(), sh.State, sh.Groups, o.State,
			weight(w.In), weight(w.Conv), bias, weights(w.DtBias, w.A, w.D, w.Norm, w.Out))
	case DeltaNet:
		w := o.W
		return "deltanet", fmt.Sprintf("%s → %s · conv %d · state %d · %d key / %d value heads · state slot %d · %s",
			o.In, o.Out, o.Shape.ConvKernel, o.Shape.StateSize, o.Shape.KeyHeads, o.Shape.ValueHeads, o.State,
			weights(w.QKV, w.Z, w.Conv, w.DtBias, w.A, w.Beta, w.Alpha, w.Norm, w.Out))
	case ShortConv:
		return "shortconv", fmt.Sprintf("%s → %s · kernel %d · %s · %s · %s · state slot %d", o.In, o.Out, o.L, weight(o.W.InProj), weight(o.W.Conv), weight(o.W.OutProj), o.State)
	case Residual:
		s := "x += "
		if o.PostNorm != nil {
			s += fmt.Sprintf("rms(%s)·%s", o.Branch, weight(*o.PostNorm))
		} else {
			s += o.Branch.String()
		}
		return "residual", s + scaled(o.Scale)
	case PerLayerEmbedding:
		return "ple", fmt.Sprintf("x += rms(%s·(gelu(%s·x) ⊙ ple[%d]))·%s", weight(o.W.Proj), weight(o.W.Gate), o.Layer, weight(o.W.Norm))
	case ScaleStream:
		return "scale", "x × " + weight(o.W)
	case MTPInput:
		return "mtp-input", fmt.Sprintf("x = %s · [rms(x)·%s | rms(h)·%s] · eps %s (h: the trunk's hidden state at the position before, or this head's own output)",
			weight(o.EHProj), weight(o.ENorm), weight(o.HNorm), num(o.Eps))
	}
	return "?", fmt.Sprintf("%T", op)
}

func rotation(r Rotation) string {
	pairs := "adjacent pairs"
	if r.NeoX {
		pairs = "neox pairs"
	}
	s := fmt.Sprintf("%d dims · %s · base %s", r.Dims, pairs, num(r.Base))
	if r.Scale != 1 {
		s += " · positions × " + num(r.Scale)
	}
	if r.AttnFactor != 1 {
		s += " · cos,sin × " + num(r.AttnFactor)
	}
	if r.Factors != nil {
		s += fmt.Sprintf(" · %d frequency factors", len(r.Factors))
	}
	if r.YaRN != nil {
		s += fmt.Sprintf(" · yarn ramp %s..%s, mscale %s", num(r.YaRN.Low), num(r.YaRN.High), num(r.YaRN.MScale))
	}
	return s
}

func weight(w Weight) string {
	name := w.Name
	if name == "" {
		name = "(unnamed)"
	}
	if w.Rows <= 1 {
		return fmt.Sprintf("%s %s [%d]", name, w.Type, w.Cols)
	}
	return fmt.Sprintf("%s %s [%d×%d]", name, w.Type, w.Cols, w.Rows)
}

func weights(ws ...Weight) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = weight(w)
	}
	return strings.Join(s, ", ")
}

func bufs(bs []Buf) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = b.String()
	}
	return strings.Join(s, ",")
}

func scaled(x float32) string {
	if x == 1 {
		return ""
	}
	return " × " + num(x)
}

// num prints a float32 in its shortest exact form.
func num(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }

func bytesPer(n int64) string { return fmt.Sprintf("%d B", n) }
