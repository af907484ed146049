package sample

// Stage is one link of the sampler chain, in the order the chain runs them.
type Stage uint8

const (
	StageNone Stage = iota // not cut
	StagePenalties
	StageTopK
	StageTopP
	StageMinP
	StageTemperature
	StageDraw
	// StageForced takes the draw's place when the token was chosen by the
	// caller (a fork) instead of drawn.
	StageForced
)

var stageNames = [...]string{"", "penalties", "top-k", "top-p", "min-p", "temperature", "draw", "forced"}

// String is the stage's name as the settings panel spells it.
func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "?"
}

// FunnelStage says what was left after one stage of the chain.
type FunnelStage struct {
	Stage Stage
	// Left is how many tokens survive the stage. When Exact is false it
	// is a lower bound: the chain did not rank further than it needed (a
	// head read on the device, or top-p walked past what min-p keeps).
	Left  int
	Exact bool
	// Mass is the probability the survivors held in the full (penalised,
	// temperature 1) distribution.
	Mass float64
	// Active is false when the setting is off and the stage passed
	// everything through.
	Active bool
	// Penalized is, for the penalties stage, how many distinct tokens of
	// the recent history had their logits pushed down.
	Penalized int
}

// Funnel is every stage in chain order: penalties, top-k, top-p, min-p,
// temperature, draw. It is an array so a step's result allocates nothing
// more than its candidates; a zero Funnel (Stage None) means none was kept.
type Funnel [6]FunnelStage

// funnelWalk bounds how far top-p walks the ranking past what min-p keeps,
// only to tell the funnel where top-p alone would stop.
const funnelWalk = 256

// stageCounts are the per-stage survivor counts truncate finds.
type stageCounts struct {
	topK, topP, minP int
	topPExact        bool
	weightK          float64 // Σ weight over the top-k survivors
}

// cutBy names the stage that removed the token ranked i, StageNone when
// it survived truncation.
func (st step) cutBy(i int) Stage {
	switch {
	case i >= st.kept && i >= st.stages.topK:
		return StageTopK
	case i >= st.kept && i >= st.stages.topP:
		return StageTopP
	case i >= st.kept:
		return StageMinP
	}
	return StageNone
}

// funnel lists every stage in chain order with what it left. token is the
// drawn one (an index into s.work).
func (s *Sampler) funnel(st step, token int32) Funnel {
	v := len(s.work)
	sc := st.stages
	massOf := func(n int) float64 {
		switch {
		case n >= v && !st.head:
			return 1
		case n == sc.topK:
			return sc.weightK / st.z
		}
		sum := 0.0
		for _, id := range s.rank.top(n) {
			sum += weight(s.work[id], st.max)
		}
		return sum / st.z
	}
	penalized := 0
	if s.penalized {
		// window holds the sorted penalty window of this step.
		for i, id := range s.window {
			if i == 0 || id != s.window[i-1] {
				penalized++
			}
		}
	}
	afterTopP := min(sc.topK, sc.topP)
	afterMinP := st.kept
	return Funnel{
		{Stage: StagePenalties, Left: v, Exact: !st.head, Mass: massOf(v), Active: penalized > 0, Penalized: penalized},
		{Stage: StageTopK, Left: sc.topK, Exact: !st.head || sc.topK < v, Mass: massOf(sc.topK), Active: s.p.TopK > 0},
		{Stage: StageTopP, Left: afterTopP, Exact: sc.topPExact && (!st.head || afterTopP < v), Mass: massOf(afterTopP), Active: s.p.TopP < 1},
		{Stage: StageMinP, Left: afterMinP, Exact: !st.head || afterMinP < v, Mass: massOf(afterMinP), Active: s.p.MinP > 0},
		{Stage: StageTemperature, Left: afterMinP, Exact: !st.head || afterMinP < v, Mass: massOf(afterMinP), Active: s.p.Temperature > 0},
		{Stage: StageDraw, Left: 1, Exact: true, Mass: weight(s.work[token], st.max) / st.z, Active: true},
	}
}
