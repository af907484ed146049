package vk

import (
	"context"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
)

// TestRopeEpilogue runs a prompt and decode steps on the GPU layout with a
// decode step's rotation in the last workgroup of the Q|K|V product
// (matvec_sg.comp's ROPE) and with a rope.comp dispatch after it: the same
// arithmetic on the same values, so every logit must agree to the bit. The
// models cover the rotation's forms: RoPE alone on a quantized product
// (llama, Q4_0), per-head Q/K norms (qwen3), full-width ones (olmo2),
// sliding-window rings and a Q scale (gemma2), V norms and layers that read
// another layer's cache, Q only (gemma4); the quantized model once more
// with the integer-dot mat-vec (matvec_id.comp's ROPE_EPI), where the
// device has the integer dot product. The arrival counter must be back at
// zero after every step, or the next step's rotation would run early.
func TestRopeEpilogue(t *testing.T) {
	d := testDevice(t)
	type ropeCase struct {
		name   string
		intDot bool
	}
	cases := []ropeCase{{"synth-Q4_0.gguf", false}, {"synth-qwen3-F32.gguf", false}, {"synth-olmo2-F32.gguf", false}, {"synth-gemma2-F32.gguf", false}, {"2026/synth-gemma4-F32.gguf", false}}
	if d.Info.Features.IntegerDot {
		cases = append(cases, ropeCase{"synth-Q4_0.gguf", true})
	} else {
		t.Log("no integer dot product on this device: the integer-dot epilogue is not checked")
	}
	for _, c := range cases {
		name := c.name
		if c.intDot {
			name += ",int-dot"
		}
		t.Run(name, func(t *testing.T) {
			m := loadModel(t, testenv.Shared(t, filepath.Join("models", c.name)))
			prompt := make([]int32, 21)
			for i := range prompt {
				prompt[i] = int32(1 + (i*37)%200)
			}
			const steps = 5
			run := func(fused bool) (logits [][]float32, epilogues, dispatches int) {
				tu := gpuTuning
				tu.intDot = c.intDot
				tu.attnGran, tu.attnLanes = 4, 16 // several splits on a short context
				tu.ropeInQKV = fused
				withTuning(t, d, tu)
				vb, err := newBackendOn(d, m, backend.Options{ContextSize: 64, Device: -1}, true, true) // profiled: labels kept
				if err != nil {
					t.Fatal(err)
				}
				defer vb.Close()
				for _, rec := range vb.decode.Recorded() {
					switch {
					case strings.HasSuffix(rec.Label, "+ rope"):
						if want := map[bool]string{false: "matvec_sg_rope_", true: "matvec_id_rope_"}[c.intDot]; !strings.HasPrefix(rec.Kernel, want) {
							t.Errorf("%s ran %s, want %s*", rec.Label, rec.Kernel, want)
						}
						epilogues++
					case strings.HasSuffix(rec.Label, " rope"):
						dispatches++
					}
				}
				ctx := context.Background()
				out, err := vb.Forward(ctx, prompt, 0, false)
				if err != nil {
					t.Fatal(err)
				}
				logits = append(logits, out)
				for s := 0; s < steps; s++ {
					next := int32(argmax(out))
					if out, err = vb.Forward(ctx, []int32{next}, len(prompt)+s, false); err != nil {
						t.Fatal(err)
					}
					logits = append(logits, out)
					if vb.ropeArrive != nil {
						var w [4]byte
						vb.ropeArrive.Read(0, w[:])
						if c := binary.LittleEndian.Uint32(w[:]); c != 0 {
							t.Fatalf("step %d: the arrival counter reads %d after the step, want 0", s, c)
						}
					}
				}
				return logits, epilogues, dispatches
			}
			fused, fe, fd := run(true)
			sep, se, sd := run(false)
			layers := fe + fd
			if fe == 0 || fd != 0 || se != 0 || sd != layers {
				t.Fatalf("decode rotations: fused %d epilogues + %d dispatches, separate %d + %d; want all %d as epilogues, then all as dispatches", fe, fd, se, sd, layers)
			}
			for i := range fused {
				for j := range fused[i] {
					if math.Float32bits(fused[i][j]) != math.Float32bits(sep[i][j]) {
						t.Fatalf("step %d logit %d: %g with the epilogue, %g with rope.comp", i, j, fused[i][j], sep[i][j])
					}
				}
			}
			t.Logf("%d layers rotated in the Q|K|V product; %d steps bit-identical", layers, len(fused))
		})
	}
}
