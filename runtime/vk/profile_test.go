package vk

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/backend"
	"vkchat/runtime/vk/vulkan"
)

// TestBandwidthBytes: the read-bandwidth buffer grows with the device (to
// get past its caches) but stays within a binding, an allocation and half
// of what the heap has left.
func TestBandwidthBytes(t *testing.T) {
	const MiB, GiB = 1 << 20, 1 << 30
	type device struct {
		info vulkan.DeviceInfo
		used []uint64
	}
	dev := func(heap, used, storageRange, maxAlloc uint64) device {
		var info vulkan.DeviceInfo
		info.Heaps = []vulkan.Heap{{Size: 256 * MiB}, {Size: heap, DeviceLocal: true}}
		info.Limits = vulkan.Limits{MaxStorageBufferRange: storageRange, MaxTexelElements: 1 << 27}
		info.Features.MaxAllocationSize = maxAlloc
		return device{info, []uint64{0, used}}
	}
	for _, tc := range []struct {
		name string
		d    device
		want uint64
	}{
		{"H200: 1 GiB, not 256 MiB", dev(140*GiB, 2*GiB, 4*GiB-1, 0), 1 * GiB},
		{"8 GiB card: a sixteenth", dev(8*GiB, 0, 4*GiB-1, 0), 512 * MiB},
		{"lavapipe: the storage range", dev(2*GiB, 0, 128*MiB, 0), 128 * MiB},
		{"full heap: half of what is left", dev(4*GiB, 4*GiB-200*MiB, 4*GiB-1, 0), 100 * MiB},
		{"allocation cap", dev(64*GiB, 0, 4*GiB-1, 300*MiB), 300 * MiB},
	} {
		if got := bandwidthBytes(tc.d.info, tc.d.used); got != tc.want {
			t.Errorf("%s: %d MiB, want %d MiB", tc.name, got/MiB, tc.want/MiB)
		}
	}
}

// TestReadBandwidthOnDevice runs the timed kernels on the test device: both
// paths report a rate, and the device's timestamps are there to time them.
func TestReadBandwidthOnDevice(t *testing.T) {
	d := testDevice(t)
	if d.Info.Limits.TimestampBits == 0 {
		t.Errorf("%s's compute queue has no timestamps: the bound falls back to the wall clock", d.Info.Name)
	}
	texel, ssbo, err := d.ReadBandwidth(4 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if !(texel > 0) || !(ssbo > 0) {
		t.Errorf("bandwidth texel %g, ssbo %g", texel, ssbo)
	}
	t.Logf("%s: %.2f GB/s texel, %.2f GB/s ssbo", d.Info.Name, texel/1e9, ssbo/1e9)
}

// TestAttentionWorkTouchesOnlyAttention: the profile fills in the
// attention kernel's bytes and multiply-adds from the step's live span,
// and leaves every other dispatch's declared work alone: the mat-vecs of
// the same layer (whose labels also start "L<n> "), a gate after the
// attention and the attention output (whose labels also start "L<n> attention").
func TestAttentionWorkTouchesOnlyAttention(t *testing.T) {
	m := loadModel(t, testenv.Model(t, "stories260K.gguf"))
	b, err := newTestBackend(testDevice(t), m, backend.Options{ContextSize: 64, KVType: backend.KVF16, Device: -1}, true, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	ts := []vulkan.KernelTime{
		{Label: "L0 qkv", Kernel: "matvec_f32", Bytes: 1000, MACs: 250},
		{Label: "L0 attention", Kernel: "attention"},
		{Label: "L0 attention gate", Kernel: "dn_gate", Bytes: 7, MACs: 3},
		{Label: "L0 attention out", Kernel: "residual", Bytes: 11, MACs: 5},
		{Label: "L1 gate+up", Kernel: "matvec_f32", Bytes: 2000, MACs: 500},
		{Label: "L1 attention", Kernel: "attention"},
	}
	const pos, n = 9, 1
	b.attentionWork(ts, pos, n)
	pl := b.plans[0]
	live := uint64(pos + 1)
	wantBytes := 2 * uint64(pl.kvHeads) * uint64(pl.headDim) * 2 * live // F16 cache
	wantMACs := 2 * uint64(b.plan.Heads) * uint64(pl.headDim) * live
	declared := []vulkan.KernelTime{
		{Bytes: 1000, MACs: 250}, {}, {Bytes: 7, MACs: 3}, {Bytes: 11, MACs: 5}, {Bytes: 2000, MACs: 500}, {},
	}
	for i, k := range ts {
		if k.Kernel == "attention" {
			if k.Bytes != wantBytes || k.MACs != wantMACs {
				t.Errorf("%s: %d bytes, %d MACs; want %d, %d", k.Label, k.Bytes, k.MACs, wantBytes, wantMACs)
			}
		} else if k.Bytes != declared[i].Bytes || k.MACs != declared[i].MACs {
			t.Errorf("%s: declared work %d bytes, %d MACs overwritten with %d, %d", k.Label, declared[i].Bytes, declared[i].MACs, k.Bytes, k.MACs)
		}
	}

	// and on a real profile the decode step's mat-vecs keep the bytes
	// their recordings declared: all of them together stream every
	// matrix once (the weights but the token embeddings, of which the
	// step reads one row)
	p, err := b.Profile(context.Background(), 0, 8)
	if err != nil {
		t.Fatal(err)
	}
	var got uint64
	for _, k := range p.Decode {
		if strings.HasPrefix(k.Kernel, "matvec") {
			got += k.Bytes
		}
	}
	var want uint64
	tied := true
	for _, tn := range m.File.Tensors {
		switch {
		case tn.Name == "output.weight":
			tied = false
			want += tn.Size
		case tn.Name != "token_embd.weight" && len(tn.Dims) >= 2:
			want += tn.Size
		}
	}
	if tied { // the head reads the embeddings as its matrix
		want += uint64(len(m.TokenEmbd.Data))
	}
	if got < want*9/10 || got > want*11/10 {
		t.Errorf("decode mat-vecs declare %d bytes; the matrices are %d", got, want)
	}
}

// TestAttentionWorkCountsCacheRows: the bytes a profile gives an attention
// pass are the cache rows' bytes in their own types, so a quantized or
// mixed cache counts its blocks (34 bytes per 32 values for q8_0) and the
// quantized-cache kernel (attnq) is counted as the f16 one is.
func TestAttentionWorkCountsCacheRows(t *testing.T) {
	m := loadModel(t, testenv.Shared(t, filepath.Join("models", "synth-F32.gguf")))
	for _, c := range []struct {
		k, v   backend.KVType
		kernel string
	}{
		{backend.KVF16, "", "attention"},
		{backend.KVF32, backend.KVF16, "attention"},
		{backend.KVQ8_0, "", "attnq"},
		{backend.KVQ4_0, backend.KVF16, "attnq"},
	} {
		t.Run(string(c.k)+"/"+string(c.v), func(t *testing.T) {
			b, err := newTestBackend(testDevice(t), m, backend.Options{ContextSize: 64, KVType: c.k, KVTypeV: c.v, Device: -1}, true, true)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := b.Close(); err != nil {
					t.Error(err)
				}
			})
			ts := []vulkan.KernelTime{{Label: "L0 attention", Kernel: c.kernel}}
			const pos = 9
			b.attentionWork(ts, pos, 1)
			pl := b.plans[0]
			v := c.v
			if v == "" {
				v = c.k
			}
			// per value: f32 4, f16 2, q8_0 34/32, q4_0 18/32 bytes
			perValue := map[backend.KVType]float64{backend.KVF32: 4, backend.KVF16: 2, backend.KVQ8_0: 34.0 / 32, backend.KVQ4_0: 18.0 / 32}
			want := uint64(float64(pl.kvHeads*pl.headDim*(pos+1)) * (perValue[c.k] + perValue[v]))
			if ts[0].Bytes != want {
				t.Errorf("%s over a %s/%s cache: %d bytes, want %d", c.kernel, c.k, v, ts[0].Bytes, want)
			}
		})
	}
}
