package inspector

import (
	"math"

	"vkchat/ui/conversation"
	"vkchat/ui/panels"
	"vkchat/ui/theme"
)

// SurprisalLevel maps bits of surprisal to a heatmap colour on a log scale:
// ≥8 bits (p ≤ 1/256), ≥4, ≥2, ≥1, and under 1 bit. Unlike the probability
// scale, which lumps every p < 10% together, it tells a 1-in-20 choice from
// a 1-in-1000 one.
func SurprisalLevel(bits float64) int {
	switch {
	case bits >= 8:
		return 0
	case bits >= 4:
		return 1
	case bits >= 2:
		return 2
	case bits >= 1:
		return 3
	default:
		return 4
	}
}

// HeatLevel is the heatmap colour of step k of t, by probability or by
// surprisal.
func HeatLevel(t *conversation.Turn, k int, bySurprisal bool) int {
	if bySurprisal {
		return SurprisalLevel(t.Surprisal(k))
	}
	return theme.HeatLevel(t.ChosenProb(k))
}

// Heat reports whether the heatmap is on and whether it colours by
// surprisal rather than probability.
func (in *Inspector) Heat() (on, bySurprisal bool) { return in.heat, in.bySurprisal }

// ToggleHeat switches the heatmap on or off; the text is for the status line.
func (in *Inspector) ToggleHeat() string {
	in.heat = !in.heat
	if in.heat {
		return "heatmap: each generated token coloured by its probability (red < 10% … green ≥ 90%)"
	}
	return "heatmap off"
}

// ToggleHeatBasis switches the heatmap between probability and surprisal,
// turning it on if it was off; the text is for the status line.
func (in *Inspector) ToggleHeatBasis() string {
	if !in.heat {
		in.heat = true
	} else {
		in.bySurprisal = !in.bySurprisal
	}
	if in.bySurprisal {
		return "heatmap by surprisal: red ≥ 8 bits (p ≤ 1/256) … green < 1 bit · s: by probability"
	}
	return "heatmap by probability: red < 10% … green ≥ 90% · s: by surprisal"
}

// StripTurn is the reply the surprisal strip follows: the inspected one,
// else the newest of replies (those generated here, oldest first).
func (in *Inspector) StripTurn(inspecting bool, replies []*conversation.Turn) *conversation.Turn {
	if inspecting && in.turn != nil {
		return in.turn
	}
	if len(replies) == 0 {
		return nil
	}
	return replies[len(replies)-1]
}

// StripRows is how many rows the surprisal strip takes: it shows while
// inspecting or with the heatmap on, when the transcript keeps some room.
func (in *Inspector) StripRows(inspecting, helpShown bool, transcriptH int) int {
	const rows = 3
	// The lens view carries its own strip over the reply.
	if (!inspecting && !in.heat) || helpShown || transcriptH < rows+4 || (inspecting && in.lens.on) {
		return 0
	}
	return rows
}

// Surprisal is the strip's data for reply t (nil: an empty strip).
func (in *Inspector) Surprisal(t *conversation.Turn, inspecting bool) panels.Surprisal {
	s := panels.Surprisal{Cursor: -1, BySurprisal: in.bySurprisal}
	if t == nil {
		return s
	}
	for k, st := range t.Steps {
		s.Bits = append(s.Bits, t.Surprisal(k))
		s.Entropy = append(s.Entropy, float64(st.Entropy)/math.Ln2)
	}
	if inspecting && in.turn == t {
		s.Cursor = in.step
	}
	return s
}
