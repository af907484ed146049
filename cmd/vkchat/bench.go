package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"vkchat/runtime/arch"
	"vkchat/runtime/backend"
	"vkchat/runtime/cpu"
	"vkchat/runtime/engine"
	"vkchat/runtime/gguf"
	"vkchat/runtime/plan"
	"vkchat/runtime/vk"
	"vkchat/runtime/vk/vulkan"
)

func init() {
	register(command{name: "bench", summary: "measure prefill and decode speed (llama-bench style)", run: runBench})
}

// benchResult is one row of the table and one object of --json.
type benchResult struct {
	Model           string    `json:"model"`
	SizeBytes       int64     `json:"size_bytes"`
	Params          int64     `json:"params"`
	Backend         string    `json:"backend"`
	Device          string    `json:"device"`
	Test            string    `json:"test"`
	Tokens          int       `json:"n_tokens"`
	TokensPerSecond float64   `json:"tokens_per_second"`
	StdDev          float64   `json:"stddev"`
	Samples         []float64 `json:"samples_tokens_per_second"`
	// Decode rows: how the next token came back ("device head": the
	// backend's top-k kernel, as the chat uses it; "logits": the whole
	// vocabulary) and, on Vulkan, the speed bound of the device it ran on.
	DecodePath string `json:"decode_path,omitempty"`
	// Team and Load (bench --team, --load; bench_team.go): how the CPU
	// backend shared its jobs ("on": the team, "off": the hand-off) and
	// the busy threads of another process beside it.
	Team string `json:"team,omitempty"`
	Load int    `json:"load,omitempty"`
	// LoadApart: the load ran in a session of its own (--load-session own)
	LoadApart bool `json:"load_apart,omitempty"`
	// CPU decode rows with the team on: of the windows of decode steps
	// the team judged, how many it ran as contended (cpu.TeamContention)
	Windows   int64 `json:"team_windows,omitempty"`
	Contended int64 `json:"team_contended_windows,omitempty"`
	bound
	specFields
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "--model FILE [--backend auto|cpu|vulkan] [-p 128] [-n 64] [-r 3] [--json] [--profile] [--head auto|on|off] [--depth D] [--spec ngram|draft|mtp [--draft FILE] [--spec-max N]] [--team on|off|both] [--load N [--load-session same|own]]", stderr)
	path := fs.String("model", "", "GGUF model file, or demo for the model built into vkchat")
	name := fs.String("backend", "auto", "backend: auto (Vulkan on a GPU, else the CPU), cpu or vulkan")
	pp := fs.Int("p", 128, "prompt tokens for the prefill test (0 skips it)")
	tg := fs.Int("n", 64, "generated tokens for the decode test (0 skips it)")
	reps := fs.Int("r", 3, "repetitions of each test")
	asJSON := fs.Bool("json", false, "print a JSON list instead of the table")
	profile := fs.Bool("profile", false, "vulkan: per-kernel device time and the measured read bandwidth; cpu: wall time per plan op of a prefill of -p tokens and -n decode steps")
	device := fs.Int("device", -1, "vulkan device index (see 'vkchat devices'); -1 picks the best")
	threads := fs.Int("threads", 0, "cpu worker threads (0: one per physical core)")
	kvType := fs.String("kv", "f16", "KV cache type: f16, f32, q8_0, q5_1, q5_0, q4_1, q4_0 or iq4_nl")
	head := fs.String("head", "auto", "vulkan: next-token top-k on the device: auto (on GPUs), on or off")
	depth := fs.Int("depth", 0, "context position the prefill and decode tests start at (the cache is filled by an untimed prefill first)")
	specMode := fs.String("spec", "", "also a greedy reply of -n tokens by the engine without and with speculative decoding: ngram, draft (--draft) or mtp")
	specMax := fs.Int("spec-max", 0, "the most tokens a speculative round drafts (0: automatic)")
	draft := fs.String("draft", "", "the draft model for --spec draft")
	teamMode := fs.String("team", "", "cpu: share each op's work by the thread team (on), by hand-offs to idle workers (off), or measure both")
	load := fs.Int("load", 0, "also run each test beside another process keeping this many threads busy")
	loadSession := fs.String("load-session", "same", "--load: the busy process runs in the bench's session (same) or a session of its own (own), as one started from another terminal")
	specPrompt := fs.String("spec-prompt", "", "--spec: the text the replies continue (completion, no template; default: a counting rhyme repeated)")
	specLead := fs.Int("spec-lead", 512, "--spec: at most this many tokens of the model's own greedy continuation join the prompt before the timed replies (untimed), up to where it repeats itself, then that loop 32 times more, so they continue a repetitive reply")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sb *specBench
	if *specMode != "" {
		m, err := engine.ParseSpecMode(*specMode)
		if err != nil {
			return fmt.Errorf("--spec: %w", err)
		}
		if m == engine.SpecOff || *tg < 2 {
			return fmt.Errorf("--spec %s: want ngram, draft or mtp, and -n of 2 or more", m)
		}
		if *specLead < 0 || *specLead > 4096 {
			return fmt.Errorf("--spec-lead %d: want 0 to 4096", *specLead)
		}
		if *specMax < 0 {
			return fmt.Errorf("--spec-max %d is negative: want 0 (automatic) or more", *specMax)
		}
		sb = &specBench{mode: m, max: *specMax, draft: *draft, threads: *threads, kv: backend.KVType(*kvType), lead: *specLead, prompt: *specPrompt}
	}
	if *path == "" {
		fs.Usage()
		return fmt.Errorf("--model is required")
	}
	configs, err := benchConfigs(*teamMode, *load, *loadSession)
	if err != nil {
		return err
	}
	if cpu.TeamOn() {
		defer cpu.SetTeam(true)
	} else {
		defer cpu.SetTeam(false)
	}
	if *reps < 1 || *pp < 0 || *tg < 0 || *depth < 0 {
		return fmt.Errorf("-r must be at least 1 and -p, -n, --depth not negative")
	}
	// The tests' context is --depth plus the longer test; each is held to
	// the bound first so that the sum cannot wrap.
	if need := *depth + max(*pp, *tg, 1) + 1; max(*pp, *tg, *depth) > engine.MaxContext || engine.CheckContextSize(need) != nil {
		return fmt.Errorf("-p %d, -n %d and --depth %d need more than the largest context, %d positions", *pp, *tg, *depth, engine.MaxContext)
	}
	choice, err := engine.ChooseBackend(*name, *device)
	if err != nil {
		return err
	}
	if *profile && choice.Backend != "vulkan" && choice.Backend != "cpu" {
		return fmt.Errorf("--profile needs --backend vulkan or cpu")
	}
	var headMode backend.HeadMode
	switch *head {
	case "auto":
	case "on", "off":
		headMode = backend.HeadMode(*head)
	default:
		return fmt.Errorf("--head %q: want auto, on or off", *head)
	}
	file, err := modelPath(*path)
	if err != nil {
		return err
	}
	f, err := gguf.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := arch.Load(f)
	if err != nil {
		return err
	}
	opts := backend.Options{ContextSize: *depth + max(*pp, *tg, 1) + 1, Threads: *threads, KVType: backend.KVType(*kvType), Device: *device, DeviceHead: headMode}
	var b backend.Backend
	var prof *vk.Backend
	if choice.Backend == "vulkan" && *profile {
		var p *plan.Plan
		if p, err = plan.Resolve(m, opts.ContextSize); err == nil {
			prof, err = vk.NewProfiled(p, opts) // a timestamp after every dispatch
			b = prof
		}
	} else {
		b, err = engine.NewBackend(choice.Backend, m, opts)
	}
	if err != nil {
		return err
	}
	defer b.Close()

	base := benchResult{
		Model: filepath.Base(*path), SizeBytes: m.WeightBytes(), Params: m.Params(),
		Backend: b.Name(), Device: b.Memory().Device,
	}
	tokens := func(n int) []int32 {
		t := make([]int32, n)
		for i := range t {
			t[i] = int32(1 + (i*7919)%(m.Vocab-1))
		}
		return t
	}
	var results []benchResult
	var texel, ssbo float64 // the Vulkan device's read bandwidth, once measured
	at := ""
	if *depth > 0 && (*pp > 0 || *tg > 0) {
		// the positions before the tests hold real keys and values; each
		// test (and each repetition) rewrites only those from depth on
		if _, err := b.Forward(ctx, tokens(*depth), 0, false); err != nil {
			return fmt.Errorf("filling the cache to position %d: %w", *depth, err)
		}
		at = fmt.Sprintf(" @ d%d", *depth)
	}
	var decodeTPS float64
	for _, cfg := range configs {
		stop, err := cfg.apply()
		if err != nil {
			return err
		}
		sfx := cfg.suffix()
		if *pp > 0 {
			prompt := tokens(*pp)
			r, err := measure(ctx, *reps, *pp, func() error {
				_, err := b.Forward(ctx, prompt, *depth, false)
				return err
			})
			if err != nil {
				stop()
				return fmt.Errorf("prefill: %w", err)
			}
			r.benchResult = base
			r.Team, r.Load, r.LoadApart = cfg.team, cfg.load, cfg.apart
			results = append(results, r.result(fmt.Sprintf("pp%d", *pp)+at+sfx, *pp))
		}
		if *tg > 0 {
			step, path := decodeStep(b)
			judged0, contended0 := cpu.TeamContention()
			r, err := measure(ctx, *reps, *tg, func() error {
				next := int32(1)
				for i := 0; i < *tg; i++ {
					var err error
					if next, err = step(ctx, next, *depth+i); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				stop()
				return fmt.Errorf("decode: %w", err)
			}
			r.benchResult = base
			r.Team, r.Load, r.LoadApart = cfg.team, cfg.load, cfg.apart
			res := r.result(fmt.Sprintf("tg%d", *tg)+at+sfx, *tg)
			res.DecodePath = path
			decodeTPS = res.TokensPerSecond
			if vb, ok := b.(*vk.Backend); ok {
				if texel == 0 {
					if texel, ssbo, err = readBandwidth(vb); err != nil {
						stop()
						return err
					}
				}
				// at the mean context position of the test's steps
				res.bound = decodeBound(vb, *depth+*tg/2, texel, res.TokensPerSecond)
			}
			if cb, ok := b.(*cpu.Backend); ok {
				res.bound = cpuDecodeBound(cb, *depth+*tg/2, *threads, res.TokensPerSecond)
				if cpu.TeamOn() {
					judged, contended := cpu.TeamContention()
					res.Windows, res.Contended = judged-judged0, contended-contended0
				}
			}
			results = append(results, res)
		}
		stop()
	}
	if sb != nil {
		sb.backend, sb.head = choice.Backend, headMode
		rows, err := sb.run(ctx, file, *tg, *reps, base)
		if err != nil {
			return fmt.Errorf("bench --spec: %w", err)
		}
		results = append(results, rows...)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else {
		printBench(stdout, results)
		printLoadKept(stdout, results)
		printContention(stdout, results)
		printSpec(stdout, results)
	}
	if prof != nil {
		if texel == 0 {
			if texel, ssbo, err = readBandwidth(prof); err != nil {
				return err
			}
		}
		return printProfile(ctx, stdout, prof, *depth, *pp, texel, ssbo, decodeTPS)
	}
	if cb, ok := b.(*cpu.Backend); ok && *profile {
		return printCPUProfile(ctx, stdout, cb, tokens, *depth, *pp, *tg)
	}
	return nil
}

type measured struct {
	benchResult
	samples []float64
}

func (r measured) result(test string, n int) benchResult {
	out := r.benchResult
	out.Test, out.Tokens, out.Samples = test, n, r.samples
	var sum float64
	for _, s := range r.samples {
		sum += s
	}
	out.TokensPerSecond = sum / float64(len(r.samples))
	if len(r.samples) > 1 {
		var v float64
		for _, s := range r.samples {
			v += (s - out.TokensPerSecond) * (s - out.TokensPerSecond)
		}
		out.StdDev = math.Sqrt(v / float64(len(r.samples)-1))
	}
	return out
}

// measure runs f once to warm up (pipelines compile on first use on some
// drivers) and then reps times, recording tokens per second.
func measure(ctx context.Context, reps, tokens int, f func() error) (measured, error) {
	var r measured
	if err := f(); err != nil {
		return r, err
	}
	for i := 0; i < reps; i++ {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		t0 := time.Now()
		if err := f(); err != nil {
			return r, err
		}
		r.samples = append(r.samples, float64(tokens)/time.Since(t0).Seconds())
	}
	return r, nil
}

func argmax(v []float32) int32 {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return int32(best)
}

func printBench(w io.Writer, rs []benchResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.AlignRight|tabwriter.Debug)
	fmt.Fprintln(tw, "| model\t size\t params\t backend\t device\t test\t t/s\t of bound\t")
	fmt.Fprintln(tw, "| ---\t ---:\t ---:\t ---\t ---\t ---:\t ---:\t ---:\t")
	for _, r := range rs {
		of := ""
		if r.BoundTPS > 0 {
			of = fmt.Sprintf("%.0f%% of %.1f", 100*r.FractionOfBound, r.BoundTPS)
		}
		fmt.Fprintf(tw, "| %s\t %s\t %s\t %s\t %s\t %s\t %.2f ± %.2f\t %s\t\n", r.Model, humanBytes(r.SizeBytes), humanCount(r.Params), r.Backend, r.Device, r.Test, r.TokensPerSecond, r.StdDev, of)
	}
	tw.Flush()
	for _, r := range rs {
		if r.BoundTPS > 0 {
			how := "texel fetches, measured on this device"
			if r.Backend == "cpu" {
				how = "streaming reads by the CPU threads, measured on this machine"
			}
			fmt.Fprintf(w, "\n%s bound: %s read per token at %.2f GB/s (%s) = %.1f tok/s\n",
				r.Test, humanBytes(int64(r.BytesPerToken)), r.ReadBandwidth/1e9, how, r.BoundTPS)
		}
	}
}

// profileKind groups dispatches by what they compute: the label without
// its layer ("L3 qkv" → "qkv"), part or chunk suffixes, and the shader.
func profileKind(k vulkan.KernelTime) string {
	f := strings.Fields(k.Label)
	if len(f) > 1 && len(f[0]) > 1 && f[0][0] == 'L' && strings.Trim(f[0][1:], "0123456789") == "" {
		f = f[1:]
	}
	name := ""
	if len(f) > 0 {
		name = f[0]
	}
	// The tiled product's phase 0 (x rounded to the weights'
	// vec_dot_type) shares the product's shader; a row of its own shows
	// what the rounding costs against the multiply-adds.
	if strings.Contains(k.Label, "vec_dot_type") {
		name += " x"
	}
	return name + " (" + k.Kernel + ")"
}

// printProfile prints where a decode step at position pos and a prefill
// chunk spend device time per kernel, with the mat-vec bandwidth against
// the measured bound, and the decode step's device time against its wall
// time in the bench (decodeTPS, 0 when not measured): the gap is what the
// host, the submission and the idle device between dispatches cost.
func printProfile(ctx context.Context, w io.Writer, b *vk.Backend, pos, pp int, texel, ssbo, decodeTPS float64) error {
	p, err := b.Profile(ctx, pos, max(pp, 2))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nread bandwidth (%s): %.2f GB/s via texel fetches (what the kernels use), %.2f GB/s via storage-buffer loads\n",
		b.Device().Name, texel/1e9, ssbo/1e9)
	show := func(title string, ts []vulkan.KernelTime, tokens int) {
		type agg struct {
			name       string
			t          time.Duration
			bytes      uint64
			macs       uint64
			dispatches int
		}
		byKind := map[string]*agg{}
		var total time.Duration
		var bytes uint64
		for _, k := range ts {
			kind := profileKind(k)
			a := byKind[kind]
			if a == nil {
				a = &agg{name: kind}
				byKind[kind] = a
			}
			a.t += k.Time
			a.bytes += k.Bytes
			a.macs += k.MACs
			a.dispatches++
			total += k.Time
			bytes += k.Bytes
		}
		list := make([]*agg, 0, len(byKind))
		for _, a := range byKind {
			list = append(list, a)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].t > list[j].t })
		fmt.Fprintf(w, "\n%s: %d dispatches, %.3f ms device time (%.1f tok/s if nothing else ran)\n", title, len(ts), ms(total), float64(tokens)/total.Seconds())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		// Decode streams every weight once: judge it by bandwidth against
		// the bound. Prefill reuses each weight for several tokens: judge
		// it by arithmetic.
		if tokens == 1 {
			fmt.Fprintln(tw, "  kernel\tdispatches\tms\tshare\tGB/s\tof bound\tGFLOP/s")
		} else {
			fmt.Fprintln(tw, "  kernel\tdispatches\tms\tshare\tGFLOP/s")
		}
		var macs uint64
		for _, a := range list {
			macs += a.macs
			col := "\t"
			switch {
			case a.t == 0:
			case tokens == 1 && a.bytes > 0:
				gbs := float64(a.bytes) / a.t.Seconds()
				col = fmt.Sprintf("%.2f\t%.0f%%\t%.1f", gbs/1e9, 100*gbs/texel, 2*float64(a.macs)/a.t.Seconds()/1e9)
			case tokens > 1 && a.macs > 0:
				col = fmt.Sprintf("%.1f", 2*float64(a.macs)*float64(tokens)/a.t.Seconds()/1e9)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%.3f\t%.1f%%\t%s\n", a.name, a.dispatches, ms(a.t), 100*float64(a.t)/float64(total), col)
		}
		tw.Flush()
		switch {
		case total == 0:
		case tokens == 1 && bytes > 0:
			fmt.Fprintf(w, "  whole step: %.2f GB/s of weights and cache, %.0f%% of the %.2f GB/s bound\n", float64(bytes)/total.Seconds()/1e9, 100*float64(bytes)/total.Seconds()/texel, texel/1e9)
		case tokens > 1 && macs > 0:
			fmt.Fprintf(w, "  whole chunk: %.1f GFLOP/s in the mat-vecs and everything else\n", 2*float64(macs)*float64(tokens)/total.Seconds()/1e9)
		}
	}
	show(fmt.Sprintf("decode step at position %d", pos), p.Decode, 1)
	if decodeTPS > 0 {
		var sum time.Duration
		for _, k := range p.Decode {
			sum += k.Time
		}
		wall := 1e3 / decodeTPS
		fmt.Fprintf(w, "  kernels %.3f ms of %.3f ms wall per token in the decode test (%.0f%%)\n", ms(sum), wall, 100*ms(sum)/wall)
	}
	if len(p.Prefill) > 0 {
		show(fmt.Sprintf("prefill chunk of %d tokens", p.PrefillTokens), p.Prefill, p.PrefillTokens)
		var head time.Duration
		for _, k := range p.PrefillHead {
			head += k.Time
		}
		fmt.Fprintf(w, "  then the output head for the last token: %.3f ms\n", ms(head))
	}
	return nil
}
