// Package ggml holds the tensor type table shared by the GGUF reader, the
// quantization kernels and the backends. The ids and block layouts are those
// of ggml, the library GGUF files come from.
package ggml

import (
	"fmt"
	"strings"
)

// Type is a ggml tensor element type as stored in GGUF tensor infos.
type Type uint32

// The type ids are fixed by the file format; 4 and 5 (Q4_2, Q4_3) were removed.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	I8   Type = 24
	I16  Type = 25
	I32  Type = 26
	I64  Type = 27
	F64  Type = 28
	BF16 Type = 30
	// IQ4_NL is 4-bit indices into a fixed non-linear table with an F16
	// scale per 32: here a KV cache type only, no backend computes with
	// weights of it.
	IQ4_NL Type = 20
	// MXFP4 is OCP microscaling FP4: E2M1 values with an E8M0 scale per
	// 32 (gpt-oss's experts).
	MXFP4 Type = 39
)

// QK_K is the super-block size of the K-quants.
const QK_K = 256

type traits struct {
	name       string
	blockElems uint64 // elements per block
	blockBytes uint64 // bytes per block
	supported  bool   // we can dequantize and multiply with it
}

var table = map[Type]traits{
	F32:   {"F32", 1, 4, true},
	F16:   {"F16", 1, 2, true},
	BF16:  {"BF16", 1, 2, true},
	Q4_0:  {"Q4_0", 32, 18, true},
	Q4_1:  {"Q4_1", 32, 20, true},
	Q5_0:  {"Q5_0", 32, 22, true},
	Q5_1:  {"Q5_1", 32, 24, true},
	Q8_0:  {"Q8_0", 32, 34, true},
	Q8_1:  {"Q8_1", 32, 36, false},
	Q2_K:  {"Q2_K", QK_K, 84, true},
	Q3_K:  {"Q3_K", QK_K, 110, true},
	Q4_K:  {"Q4_K", QK_K, 144, true},
	Q5_K:  {"Q5_K", QK_K, 176, true},
	Q6_K:  {"Q6_K", QK_K, 210, true},
	Q8_K:  {"Q8_K", QK_K, 292, false},
	I8:    {"I8", 1, 1, false},
	I16:   {"I16", 1, 2, false},
	I32:   {"I32", 1, 4, false},
	I64:   {"I64", 1, 8, false},
	F64:   {"F64", 1, 8, false},
	MXFP4: {"MXFP4", 32, 17, true},

	IQ4_NL: {"IQ4_NL", 32, 18, false}, // a KV cache type (runtime/quant/iq4nl.go)
}

// Known reports whether t is a type whose block layout we know, so that a file
// using it can at least be sized and validated.
func (t Type) Known() bool { _, ok := table[t]; return ok }

// Supported reports whether the backends can compute with tensors of type t.
func (t Type) Supported() bool { return table[t].supported }

// BlockElems is the number of elements in one block of t (1 for plain types).
func (t Type) BlockElems() uint64 { return table[t].blockElems }

// BlockBytes is the size in bytes of one block of t.
func (t Type) BlockBytes() uint64 { return table[t].blockBytes }

func (t Type) String() string {
	if tr, ok := table[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// Quantized reports whether t is a block-quantized type.
func (t Type) Quantized() bool { return table[t].blockElems > 1 }

// RowBytes returns the bytes of a row of n elements, and false when n is not
// a whole number of blocks (a file that claims such a row is malformed).
func (t Type) RowBytes(n uint64) (uint64, bool) {
	tr, ok := table[t]
	if !ok || n%tr.blockElems != 0 {
		return 0, false
	}
	return n / tr.blockElems * tr.blockBytes, true
}

// ParseType maps a name such as "Q4_0" or "f16" to its type.
func ParseType(name string) (Type, error) {
	for t, tr := range table {
		if strings.EqualFold(tr.name, name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown tensor type %q", name)
}
