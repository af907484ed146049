package models

// Qwen2 is llama with biases on Q, K and V and NeoX-style rope.
func init() { registerArch(arch{name: "qwen2", neox: true, qkvBias: true}) }
