package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"

	"vkchat/models/demo"
	"vkchat/runtime/backend"
	"vkchat/runtime/engine"
	"vkchat/runtime/sample"
)

// engineFlags are the flags every command that loads a model shares.
type engineFlags struct {
	model    string
	backend  string
	ctx      int
	threads  int
	device   int
	kvType   string
	kvTypeK  string
	kvTypeV  string
	template string
	spec     string
	specMax  int
	draft    string
}

func (e *engineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.model, "model", "", "GGUF model file, or demo for the model built into vkchat")
	fs.StringVar(&e.backend, "backend", "auto", "compute backend: auto (Vulkan on a GPU, else native CPU kernels), cpu or vulkan")
	contextFlag(fs, &e.ctx, "context size in `N` tokens (0: the model's, at most 4096)")
	fs.IntVar(&e.threads, "threads", 0, "CPU threads (0: one per physical core)")
	fs.IntVar(&e.device, "device", -1, "Vulkan device index (see 'vkchat devices'; -1: best)")
	fs.StringVar(&e.kvType, "kv-type", "f16", "KV cache type of keys and values: f16, f32, or block-quantized q8_0, q5_1, q5_0, q4_1, q4_0, iq4_nl (head sizes a multiple of 32)")
	fs.StringVar(&e.kvTypeK, "kv-type-k", "", "the keys' KV cache type, in place of --kv-type's")
	fs.StringVar(&e.kvTypeV, "kv-type-v", "", "the values' KV cache type, in place of --kv-type's")
	fs.StringVar(&e.template, "template", "", "chat template: '' for the model's own, chatml, llama2, llama3, zephyr, phi3, or none")
	fs.StringVar(&e.spec, "spec", "off", "speculative decoding: off, ngram (lookup in the conversation), draft (a smaller model, --draft) or mtp (the model's own MTP head)")
	fs.IntVar(&e.specMax, "spec-max", 0, "the most tokens a speculative round drafts (0: automatic, adapting to what is accepted)")
	fs.StringVar(&e.draft, "draft", "", "draft model for --spec draft: a smaller GGUF with the same vocabulary")
}

// modelPath is the file a --model value names: "demo" is the model built
// into vkchat (written out once), anything else a path. Every command
// that reads a model goes through it, so demo works everywhere.
func modelPath(ref string) (string, error) {
	if demo.IsRef(ref) {
		return demo.Path()
	}
	return ref, nil
}

func (e *engineFlags) load(ctx context.Context, p sample.Params) (*engine.Session, error) {
	if e.model == "" {
		return nil, fmt.Errorf("no model: pass --model FILE")
	}
	path, err := modelPath(e.model)
	if err != nil {
		return nil, err
	}
	spec, err := e.specOptions()
	if err != nil {
		return nil, err
	}
	type loaded struct {
		s   *engine.Session
		err error
	}
	// Loading can take a while (uploading weights, compiling pipelines); an
	// interrupt must not wait for it, so the load runs aside and a canceled
	// ctx returns at once (the process is about to exit).
	done := make(chan loaded, 1)
	go func() {
		s, err := engine.Load(ctx, path, engine.Options{
			Backend: e.backend, ContextSize: e.ctx, Threads: e.threads, Device: e.device,
			KVType: backend.KVType(cmp.Or(e.kvTypeK, e.kvType)), KVTypeV: backend.KVType(cmp.Or(e.kvTypeV, e.kvType)), Params: p, Template: e.template, Spec: spec,
		})
		done <- loaded{s, err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("interrupted while loading %s", e.model)
	case l := <-done:
		if ctx.Err() != nil {
			if l.s != nil {
				l.s.Close()
			}
			return nil, fmt.Errorf("interrupted while loading %s", e.model)
		}
		return l.s, l.err
	}
}

// specOptions checks --spec, --spec-max and --draft.
func (e *engineFlags) specOptions() (engine.SpecOptions, error) {
	m, err := engine.ParseSpecMode(cmp.Or(e.spec, "off"))
	if err != nil {
		return engine.SpecOptions{}, fmt.Errorf("--spec: %w", err)
	}
	if e.specMax < 0 {
		return engine.SpecOptions{}, fmt.Errorf("--spec-max %d is negative: want 0 (automatic) or more", e.specMax)
	}
	if e.draft != "" && m != engine.SpecDraft {
		return engine.SpecOptions{}, fmt.Errorf("--draft %s needs --spec draft", e.draft)
	}
	draft := e.draft
	if draft != "" {
		if draft, err = modelPath(draft); err != nil {
			return engine.SpecOptions{}, err
		}
	}
	return engine.SpecOptions{Mode: m, Max: e.specMax, Draft: draft}, nil
}

// contextFlag binds --ctx to dst, held at parse time to
// engine.CheckContextSize: every command that takes it names the flag and
// the bound the same way, before a size reaches any arithmetic (2^62
// panicked in an allocation; from 2^55 the memory estimate wrapped).
func contextFlag(fs *flag.FlagSet, dst *int, usage string) {
	fs.Func("ctx", usage, func(s string) error {
		n, err := strconv.ParseInt(s, 0, strconv.IntSize)
		if errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("too large: %s", engine.ContextRange)
		}
		if err != nil {
			return fmt.Errorf("not a whole number: %s", engine.ContextRange)
		}
		if err := engine.CheckContextSize(int(n)); err != nil {
			return err
		}
		*dst = int(n)
		return nil
	})
}

// checkCount refuses a negative count flag (-n -5 was taken silently, as
// no limit), naming the flag and what 0 means.
func checkCount(name string, v int, zero string) error {
	if v < 0 {
		return fmt.Errorf("-%s %d is negative: want 0 (%s) or more", name, v, zero)
	}
	return nil
}

// samplerFlags binds the sampler settings to flags, starting from defaults.
// drawnSeed says the command draws a new seed each run unless --seed is
// given (seedPerRun): its help must not name the fixed default as the
// seed it uses.
func samplerFlags(fs *flag.FlagSet, drawnSeed bool) *sample.Params {
	p := sample.Defaults()
	fs.Func("temp", fmt.Sprintf("temperature, 0 for greedy (default %g)", p.Temperature), floatFlag(&p.Temperature))
	fs.IntVar(&p.TopK, "top-k", p.TopK, "top-k, 0 to disable")
	fs.Func("top-p", fmt.Sprintf("top-p, 1 to disable (default %g)", p.TopP), floatFlag(&p.TopP))
	fs.Func("min-p", fmt.Sprintf("min-p, 0 to disable (default %g)", p.MinP), floatFlag(&p.MinP))
	fs.Func("repeat-penalty", fmt.Sprintf("repetition penalty, 1 to disable (default %g)", p.RepeatPenalty), floatFlag(&p.RepeatPenalty))
	fs.Func("presence-penalty", "presence penalty, -2 to 2 (default 0, off)", floatFlag(&p.PresencePenalty))
	fs.Func("frequency-penalty", "frequency penalty, -2 to 2 (default 0, off)", floatFlag(&p.FrequencyPenalty))
	if drawnSeed {
		fs.Func("seed", "random seed `N` (default: a new one drawn for each chat, shown in the sampler panel)", func(s string) error {
			v, err := strconv.ParseUint(s, 0, 64)
			if err != nil {
				return fmt.Errorf("want a whole number from 0 to %d", uint64(math.MaxUint64))
			}
			p.Seed = v
			return nil
		})
	} else {
		fs.Uint64Var(&p.Seed, "seed", p.Seed, "random seed")
	}
	return &p
}

// checkSampler holds the sampler flags to the ranges the chat's commands
// and the files use (sample.Params.Check), naming the flag.
func checkSampler(p *sample.Params) error {
	err := p.Check()
	var re *sample.RangeError
	if !errors.As(err, &re) {
		return err
	}
	flag := map[string]string{"temperature": "temp", "top_k": "top-k", "top_p": "top-p", "min_p": "min-p", "repeat_penalty": "repeat-penalty",
		"presence_penalty": "presence-penalty", "frequency_penalty": "frequency-penalty"}[re.Key]
	if flag == "" {
		return err
	}
	return fmt.Errorf("--%s %g is out of range (%g to %g)", flag, re.Value, re.Lo, re.Hi)
}

func floatFlag(dst *float32) func(string) error {
	return func(s string) error {
		var v float64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		*dst = float32(v)
		return nil
	}
}

// flagSet reports whether name was given on the command line (not left at
// its default).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
