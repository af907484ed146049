package quant

import (
	"encoding/binary"
	"fmt"
	"math"

	"vkchat/runtime/ggml"
)

// quantizers are ggml's reference quantizers (quantize_row_*_ref), the ones
// llama-quantize uses when it has no importance matrix, so their output is
// byte-identical to llama.cpp's files. Each encodes whole blocks.
var quantizers = map[ggml.Type]func(src []float32, dst []byte){
	ggml.F32:   quantizeF32,
	ggml.F16:   quantizeF16,
	ggml.BF16:  quantizeBF16,
	ggml.Q4_0:  quantizeQ4_0,
	ggml.MXFP4: quantizeMXFP4,
	ggml.Q4_1:  quantizeQ4_1,
	ggml.Q5_0:  quantizeQ5_0,
	ggml.Q5_1:  quantizeQ5_1,
	ggml.Q8_0:  quantizeQ8_0,
	ggml.Q2_K:  quantizeQ2K,
	ggml.Q3_K:  quantizeQ3K,
	ggml.Q4_K:  quantizeQ4K,
	ggml.Q5_K:  quantizeQ5K,
	ggml.Q6_K:  quantizeQ6K,
	// llama.cpp's reference for a KV cache row (iq4nl.go); llama-quantize
	// searches scales for weights
	ggml.IQ4_NL: quantizeIQ4NL,
}

// Quantize encodes src, a whole number of blocks, as t with ggml's reference
// quantizer for t. Supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_NL (quantize_row_iq4_nl_ref, without
// llama-quantize's scale search).
func Quantize(t ggml.Type, src []float32) ([]byte, error) {
	q, ok := quantizers[t]
	if !ok {
		return nil, fmt.Errorf("quant: no quantizer for %v", t)
	}
	f, err := formatOf(t)
	if err != nil {
		return nil, err
	}
	n, err := f.rowBytes(t, len(src))
	if err != nil {
		return nil, err
	}
	dst := make([]byte, n)
	q(src, dst)
	return dst, nil
}

func quantizeF32(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

func quantizeF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToFP16(v))
	}
}

func quantizeBF16(src []float32, dst []byte) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], FP32ToBF16(v))
	}
}

func quantizeQ8_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		b := (*[34]byte)(dst[i*34:])
		_, h := quantQ8Block((*[32]float32)(src[i*32:]), (*[32]int8)(asInt8(b[2:])))
		binary.LittleEndian.PutUint16(b[0:], h)
	}
}

// absMax returns the element of largest magnitude, the first one on ties, as
// the symmetric quantizers pick it.
func absMax(x []float32) float32 {
	var amax, max float32
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, max = a, v
		}
	}
	return max
}

// minMax returns the extremes as quantize_row_q4_1_ref/q5_1_ref find them.
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

func inv(d float32) float32 {
	if d == 0 {
		return 0
	}
	return 1 / d
}

func quantizeQ4_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[18]byte)(dst[i*18:])
		d := absMax(x[:]) / -8
		id := inv(d)
		binary.LittleEndian.PutUint16(b[0:], FP32ToFP16(d))
		for j := 0; j < 16; j++ {
			x0, x1 := float32(x[j]*id), float32(x[j+16]*id)
			// (int8_t)(v + 8.5f) truncates toward zero, then MIN(15, ·).
			b[2+j] = byte(min(15, int8(x0+8.5))) | byte(min(15, int8(x1+8.5)))<<4
		}
	}
}

func quantizeQ4_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[20]byte)(dst[i*20:])
		lo, hi := minMax(x[:])
		d := (hi - lo) / 15
		id := inv(d)
		binary.LittleEndian.PutUint16(b[0:], FP32ToFP16(d))
		binary.LittleEndian.PutUint16(b[2:], FP32ToFP16(lo))
		for j := 0; j < 16; j++ {
			x0, x1 := float32((x[j]-lo)*id), float32((x[j+16]-lo)*id)
			b[4+j] = byte(min(15, int8(x0+0.5))) | byte(min(15, int8(x1+0.5)))<<4
		}
	}
}

func quantizeQ5_0(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[22]byte)(dst[i*22:])
		d := absMax(x[:]) / -16
		id := inv(d)
		binary.LittleEndian.PutUint16(b[0:], FP32ToFP16(d))
		var qh uint32
		for j := 0; j < 16; j++ {
			x0, x1 := float32(x[j]*id), float32(x[j+16]*id)
			q0, q1 := byte(min(31, int8(x0+16.5))), byte(min(31, int8(x1+16.5)))
			b[6+j] = q0&15 | q1&15<<4
			qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
		}
		binary.LittleEndian.PutUint32(b[2:], qh)
	}
}

func quantizeQ5_1(src []float32, dst []byte) {
	for i := 0; i < len(src)/32; i++ {
		x := (*[32]float32)(src[i*32:])
		b := (*[24]byte)(dst[i*24:])
		lo, hi := minMax(x[:])
		d := (hi - lo) / 31
		id := inv(d)
		binary.LittleEndian.PutUint16(b[0:], FP32ToFP16(d))
		binary.LittleEndian.PutUint16(b[2:], FP32ToFP16(lo))
		var qh uint32
		for j := 0; j < 16; j++ {
			x0, x1 := float32((x[j]-lo)*id), float32((x[j+16]-lo)*id)
			q0, q1 := uint8(x0+0.5), uint8(x1+0.5) // no clamp in ggml either
			b[8+j] = q0&15 | q1&15<<4
			qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
		}
		binary.LittleEndian.PutUint32(b[4:], qh)
	}
}
