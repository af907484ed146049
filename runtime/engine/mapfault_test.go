package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
	"vkchat/runtime/quant"
)

// A model file truncated while a session has it mapped: Generate ends
// with ErrModelChanged naming the file, and a read of the lost pages in Go
// code (on the calling goroutine or the CPU pool's workers) is that error
// too, not a SIGBUS. The checks run in a child process, so a fault that
// is not caught fails this test instead of killing the test binary.
func TestTruncatedModelIsAnErrorNotACrash(t *testing.T) {
	if os.Getenv("VKCHAT_MAPFAULT_CHILD") != "" {
		truncatedModelChild(t)
		return
	}
	src := testenv.Model(t, "stories260K.gguf")
	cmd := exec.Command(os.Args[0], "-test.run=^TestTruncatedModelIsAnErrorNotACrash$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VKCHAT_MAPFAULT_CHILD="+src)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: all checks ran") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func truncatedModelChild(t *testing.T) {
	src := os.Getenv("VKCHAT_MAPFAULT_CHILD")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(context.Background(), p, Options{Backend: "cpu", ContextSize: 128, Template: "none"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetParams(greedy())
	if _, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once"), MaxTokens: 3}); err != nil {
		t.Fatalf("before truncating: %v", err)
	}
	emb, ok := s.file.Tensor("token_embd.weight")
	if !ok {
		t.Fatal("no token_embd")
	}
	weights := s.file.TensorData(emb)
	if err := os.Truncate(p, int64(s.file.DataOffset)); err != nil {
		t.Fatal(err)
	}

	evs, err := collect(t, s, context.Background(), Request{Messages: userMsg("Once upon"), MaxTokens: 3})
	if !errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), p) {
		t.Fatalf("Generate after truncation: %v, want ErrModelChanged naming %s", err, p)
	}
	if d := evs[len(evs)-1]; d.Kind != EventDone || d.Done.Reason != StopError {
		t.Fatalf("last event %+v", d)
	}

	// A read of the lost pages on this goroutine.
	var sink byte
	err = s.mapped(func() error { sink += weights[len(weights)-1]; return nil })
	if !errors.Is(err, ErrModelChanged) {
		t.Fatalf("read on the caller: %v", err)
	}
	// And on the CPU pool's workers, every chunk faulting.
	quant.SetThreads(4)
	for range 3 { // start the pool's workers and let them park, idle
		quant.ParallelRange(64, 1, func(lo, hi int) {})
		time.Sleep(20 * time.Millisecond)
	}
	const page = 4096
	n := len(weights) / page
	err = s.mapped(func() error {
		quant.ParallelRange(n, 1, func(lo, hi int) {
			var local byte // one per chunk: the workers run chunks at once
			for i := lo; i < hi; i++ {
				local += weights[i*page]
			}
			poolSink.Add(uint32(local))
		})
		return nil
	})
	if n >= 2 && !errors.Is(err, ErrModelChanged) {
		t.Fatalf("read on the pool (%d chunks): %v", n, err)
	}
	// The pool still works afterwards.
	quant.ParallelRange(64, 1, func(lo, hi int) {})
	_ = sink
	t.Log("child: all checks ran")
}

// poolSink keeps the pool's reads of the mapped weights from being
// optimized away.
var poolSink atomic.Uint32

// A model file truncated while it loads, after its declarations are read
// and before the backend packs (CPU) or uploads (Vulkan) its weights,
// fails the load with ErrModelChanged naming the file instead of killing
// the process with SIGBUS. Like the test above it runs in a child.
func TestModelTruncatedWhileLoading(t *testing.T) {
	if os.Getenv("VKCHAT_LOADFAULT_CHILD") != "" {
		truncatedWhileLoadingChild(t)
		return
	}
	src := testenv.Model(t, "synth-Q8_0.gguf")
	cmd := exec.Command(os.Args[0], "-test.run=^TestModelTruncatedWhileLoading$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VKCHAT_LOADFAULT_CHILD="+src)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: all checks ran") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func truncatedWhileLoadingChild(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("VKCHAT_LOADFAULT_CHILD"))
	if err != nil {
		t.Fatal(err)
	}
	backends := []string{"cpu"}
	if _, err := vulkanDevices(); err == nil {
		backends = append(backends, "vulkan")
	}
	for _, be := range backends {
		p := filepath.Join(t.TempDir(), "model.gguf")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		truncated := false
		beforeBackend = func(f *gguf.File) {
			if err := os.Truncate(p, int64(f.DataOffset)); err != nil {
				t.Fatal(err)
			}
			truncated = true
		}
		s, err := Load(context.Background(), p, Options{Backend: be, ContextSize: 64, Template: "none"})
		beforeBackend = nil
		if err == nil {
			s.Close()
		}
		if !truncated || !errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), p) {
			t.Fatalf("%s: load of a file truncated while loading: %v (truncated %v), want ErrModelChanged naming %s", be, err, truncated, p)
		}
		t.Logf("%s: %v", be, err)
	}
	t.Log("child: all checks ran")
}

// An F32 model file truncated in the middle of a reply. F32 matrices have
// no packed form, so before the CPU backend owned a copy of them its
// native kernels (C, where a fault cannot become a panic) read the lost
// pages: SIGBUS, the process gone with the reply. Now the reply goes on
// from the weights the backend owns, or ends with ErrModelChanged when it
// needs a lost page (the token embeddings, read in Go), keeping the tokens
// before it; the next reply is refused with ErrModelChanged naming the
// file. The child process turns an uncaught fault into this test's failure.
func TestF32ModelTruncatedMidReply(t *testing.T) {
	if os.Getenv("VKCHAT_MIDREPLY_CHILD") != "" {
		truncatedMidReplyChild(t)
		return
	}
	src := testenv.Model(t, "synth-F32.gguf")
	cmd := exec.Command(os.Args[0], "-test.run=^TestF32ModelTruncatedMidReply$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "VKCHAT_MIDREPLY_CHILD="+src)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "child: all checks ran") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func truncatedMidReplyChild(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("VKCHAT_MIDREPLY_CHILD"))
	if err != nil {
		t.Fatal(err)
	}
	for _, keepEmbeddings := range []bool{true, false} {
		p := filepath.Join(t.TempDir(), "model.gguf")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Load(context.Background(), p, Options{Backend: "cpu", ContextSize: 128, Template: "none"})
		if err != nil {
			t.Fatal(err)
		}
		s.SetParams(greedy())
		// Cut after the token embeddings, so that the first lost page a
		// step reads is a matrix's (read by the native kernels), or cut
		// them too, so that a step's first read (in Go) faults.
		cut := int64(s.file.DataOffset)
		if keepEmbeddings {
			emb, ok := s.file.Tensor("token_embd.weight")
			if !ok {
				t.Fatal("no token_embd")
			}
			const page = 4096
			cut = (int64(s.file.DataOffset+emb.Offset+emb.Size) + page - 1) &^ (page - 1)
			if cut+page > int64(len(data)) {
				t.Fatalf("token_embd ends at %d of %d bytes: nothing left to cut", cut, len(data))
			}
		}
		var tokens int
		var done *DoneInfo
		err = s.Generate(context.Background(), Request{Messages: userMsg("Once upon a time"), MaxTokens: 8}, func(e Event) {
			switch e.Kind {
			case EventToken:
				if tokens++; tokens == 2 {
					if err := os.Truncate(p, cut); err != nil {
						t.Error(err)
					}
				}
			case EventDone:
				done = e.Done
			}
		})
		t.Logf("cut at %d (embeddings kept: %v): %d tokens, %v", cut, keepEmbeddings, tokens, err)
		if tokens < 2 || done == nil || done.Generated < 2 {
			t.Fatalf("%d tokens, done %+v: the truncation never happened mid-reply, or its tokens were lost", tokens, done)
		}
		if err != nil && (!errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), p) || done.Reason != StopError) {
			t.Fatalf("the reply with the file truncated after 2 tokens: %v (done %+v), want it finished or ErrModelChanged naming %s", err, done, p)
		}
		if !keepEmbeddings && err == nil {
			t.Fatal("the reply read no lost page, so this case tests nothing")
		}
		_, err = collect(t, s, context.Background(), Request{Messages: userMsg("Once upon"), MaxTokens: 3})
		if !errors.Is(err, ErrModelChanged) || !strings.Contains(err.Error(), p) {
			t.Fatalf("the reply after: %v, want ErrModelChanged naming %s", err, p)
		}
		s.Close()
	}
	t.Log("child: all checks ran")
}
