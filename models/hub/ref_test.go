package hub

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		kind                Kind
		owner, repo, quant  string
		path, url, errMatch string
	}{
		{in: "hf:bartowski/SmolLM2-135M-Instruct-GGUF", kind: HF, owner: "bartowski", repo: "SmolLM2-135M-Instruct-GGUF"},
		{in: "hf:bartowski/SmolLM2-135M-Instruct-GGUF:q8_0", kind: HF, owner: "bartowski", repo: "SmolLM2-135M-Instruct-GGUF", quant: "q8_0"},
		{in: "hf:o/r:sub/model-Q4_K_M.gguf", kind: HF, owner: "o", repo: "r", quant: "sub/model-Q4_K_M.gguf"},
		{in: DefaultModel, kind: HF, owner: "bartowski", repo: "SmolLM2-135M-Instruct-GGUF", quant: "Q8_0"},
		{in: "https://example.com/m/model.gguf", kind: URL, url: "https://example.com/m/model.gguf"},
		{in: "HTTP://example.com/x", kind: URL, url: "http://example.com/x"},
		{in: "./models/x.gguf", kind: File, path: "./models/x.gguf"},
		{in: "/abs/x.gguf", kind: File, path: "/abs/x.gguf"},
		{in: "weird:name.gguf", kind: File, path: "weird:name.gguf"},
		{in: "", errMatch: "empty model reference"},
		{in: "hf:onlyowner", errMatch: "OWNER/REPO"},
		{in: "hf:a/b/c", errMatch: "OWNER/REPO"},
		{in: "hf:a/b:", errMatch: "empty quantization"},
		{in: "hf:a/b c", errMatch: "not a valid"},
		{in: "hf:a/b:../../etc", errMatch: "not a quantization"},
		{in: "ftp://example.com/x.gguf", errMatch: "unsupported scheme"},
		{in: "https:///nohost", errMatch: "no host"},
	} {
		r, err := ParseRef(tc.in)
		if tc.errMatch != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
				t.Errorf("ParseRef(%q) error = %v, want one containing %q", tc.in, err, tc.errMatch)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRef(%q): %v", tc.in, err)
			continue
		}
		got := ""
		if r.URL != nil {
			got = r.URL.String()
		}
		if r.Kind != tc.kind || r.Owner != tc.owner || r.Repo != tc.repo || r.Quant != tc.quant || r.Path != tc.path || got != tc.url {
			t.Errorf("ParseRef(%q) = %+v, want kind %v owner %q repo %q quant %q path %q url %q", tc.in, r, tc.kind, tc.owner, tc.repo, tc.quant, tc.path, tc.url)
		}
	}
}

func TestQuantOf(t *testing.T) {
	for name, want := range map[string]string{
		"SmolLM2-135M-Instruct-Q8_0.gguf":           "Q8_0",
		"qwen2.5-0.5b-instruct-q4_k_m.gguf":         "Q4_K_M",
		"Llama-3.2-1B-Instruct.Q5_K_S.gguf":         "Q5_K_S",
		"sub/Model-IQ4_XS.gguf":                     "IQ4_XS",
		"model-f16.gguf":                            "F16",
		"Model-BF16-00001-of-00002.gguf":            "BF16",
		"Q8_0/Model-Q8_0-00002-of-00003.gguf":       "Q8_0",
		"ggml-model_q4_0.gguf":                      "Q4_0",
		"tinyllama.gguf":                            "",
		"Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf":    "Q4_K_M",
		"Qwen3-30B-A3B-UD-Q4_K_XL.gguf":             "Q4_K_XL",
		"gemma-3-270m-it-qat-Q4_0.gguf":             "Q4_0",
		"phi-2.Q2_K.gguf":                           "Q2_K",
		"mistral-7b-instruct-v0.2.Q4_K_M.gguf":      "Q4_K_M",
		"DeepSeek-R1-Distill-Qwen-1.5B-Q6_K_L.gguf": "Q6_K_L",
	} {
		if got := quantOf(name); got != want {
			t.Errorf("quantOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestGuessParams(t *testing.T) {
	for name, want := range map[string]float64{
		"SmolLM2-135M-Instruct-GGUF":  135e6,
		"Qwen2.5-0.5B-Instruct-GGUF":  0.5e9,
		"Llama-3.2-1B-Instruct-GGUF":  1e9,
		"gemma-3-270m-it-GGUF":        270e6,
		"Mixtral-8x7B-Instruct-GGUF":  56e9,
		"Qwen3-30B-A3B-GGUF":          30e9,
		"TinyLlama-1.1B-Chat-v1.0":    1.1e9,
		"phi-2-GGUF":                  0,
		"Meta-Llama-3.1-8B-1M-GGUF":   8e9,
		"DeepSeek-V2-Lite-Chat-GGUF":  0,
		"SmolLM2-360M_Instruct.Q8":    360e6,
		"model-70b":                   70e9,
		"x-1B":                        1e9,
		"1.7B-first":                  1.7e9,
		"Qwen2.5-Coder-0.5B-Instruct": 0.5e9,
	} {
		if got := guessParams(name); got != want {
			t.Errorf("guessParams(%q) = %g, want %g", name, got, want)
		}
	}
}

// files lists a repo: each name is a 100 MiB file, or 4 GiB with "@big".
func files(names ...string) []repoFile {
	var fs []repoFile
	for _, n := range names {
		size := int64(100 << 20)
		if name, big := strings.CutSuffix(n, "@big"); big {
			n, size = name, 4<<30
		}
		fs = append(fs, repoFile{Type: "file", Path: n, Size: size})
	}
	return append(fs, repoFile{Type: "file", Path: "README.md", Size: 10}, repoFile{Type: "directory", Path: "sub"})
}

func TestPickFile(t *testing.T) {
	small := files("SmolLM2-135M-Instruct-Q4_K_M.gguf", "SmolLM2-135M-Instruct-Q8_0.gguf", "SmolLM2-135M-Instruct-f16.gguf")
	large := files("Llama-3.1-8B-Q4_K_M.gguf@big", "Llama-3.1-8B-Q8_0.gguf@big", "Llama-3.1-8B-Q6_K.gguf@big")
	for _, tc := range []struct {
		ref   string
		files []repoFile
		want  string // file path, or "error: substring"
	}{
		{"hf:a/SmolLM2-135M-Instruct-GGUF", small, "SmolLM2-135M-Instruct-Q8_0.gguf"},
		{"hf:a/SmolLM2-135M-Instruct-GGUF:q4_k_m", small, "SmolLM2-135M-Instruct-Q4_K_M.gguf"},
		{"hf:a/SmolLM2-135M-Instruct-GGUF:F16", small, "SmolLM2-135M-Instruct-f16.gguf"},
		{"hf:a/Llama-3.1-8B-GGUF", large, "Llama-3.1-8B-Q4_K_M.gguf"},
		// No size in the name: the Q8_0 file's size decides.
		{"hf:a/Mystery-GGUF", files("m-Q4_K_M.gguf", "m-Q8_0.gguf"), "m-Q8_0.gguf"},
		{"hf:a/Mystery-GGUF", files("m-Q4_K_M.gguf@big", "m-Q8_0.gguf@big"), "m-Q4_K_M.gguf"},
		// A small model without Q8_0 still gets a sensible default.
		{"hf:a/Tiny-100M-GGUF", files("t-Q4_K_M.gguf", "t-Q6_K.gguf"), "t-Q6_K.gguf"},
		// The one GGUF of a repo is the default whatever its name.
		{"hf:a/Odd", files("weights.gguf"), "weights.gguf"},
		// Subfolder copies lose to the top-level file.
		{"hf:a/r-7B:Q4_K_M", files("x/r-Q4_K_M.gguf", "r-Q4_K_M.gguf"), "r-Q4_K_M.gguf"},
		{"hf:a/r:sub/r-Q4_K_M.gguf", files("sub/r-Q4_K_M.gguf", "r-Q4_K_M.gguf"), "sub/r-Q4_K_M.gguf"},
		{"hf:a/r:r-Q4_K_M.gguf", files("r-Q4_K_M.gguf"), "r-Q4_K_M.gguf"},
		// mmproj files are not chat models.
		{"hf:a/vision-7B", files("mmproj-f16.gguf", "v-Q4_K_M.gguf"), "v-Q4_K_M.gguf"},
		{"hf:a/SmolLM2-135M-Instruct-GGUF:Q5_K_M", small, "error: has no Q5_K_M file; available quantizations: F16, Q4_K_M, Q8_0"},
		{"hf:a/r:nope.gguf", small, "error: has no file \"nope.gguf\""},
		{"hf:a/r", files(), "error: has no .gguf files"},
		{"hf:a/big-70B:Q8_0", files("big-Q8_0-00001-of-00002.gguf", "big-Q8_0-00002-of-00002.gguf", "big-Q4_K_M.gguf"),
			"error: Q8_0 is split into several files (big-Q8_0-00001-of-00002.gguf, big-Q8_0-00002-of-00002.gguf); vkchat loads single-file GGUFs only"},
		{"hf:a/big-70B", files("big-Q4_K_M-00001-of-00002.gguf", "big-Q4_K_M-00002-of-00002.gguf"), "error: no default quantization found"},
		{"hf:a/big-70B", files("big-Q4_K_M-00001-of-00001.gguf"), "error: is split into several files"},
		{"hf:a/r-7B:IQ4_XS", files("r-IQ4_XS.gguf", "r-Q4_K_M.gguf"), "error: vkchat cannot run IQ4_XS files"},
		{"hf:a/r-7B", files("r-IQ4_XS.gguf", "r-IQ3_M.gguf"), "error: no default quantization found (tried Q4_K_M"},
		{"hf:a/r-7B:Q4_K_M", files("a/r-Q4_K_M.gguf", "b/r-Q4_K_M.gguf"), "error: has several Q4_K_M files"},
		// A substring is accepted when it picks one file.
		{"hf:a/r-7B:q4_k", files("r-Q4_K_M.gguf", "r-Q8_0.gguf"), "r-Q4_K_M.gguf"},
	} {
		r, err := ParseRef(tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		f, err := pickFile(r, tc.files)
		if want, isErr := strings.CutPrefix(tc.want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("pickFile(%s) = %q, %v; want error containing %q", tc.ref, f.Path, err, want)
			}
			continue
		}
		if err != nil || f.Path != tc.want {
			t.Errorf("pickFile(%s) = %q, %v; want %q", tc.ref, f.Path, err, tc.want)
		}
	}
}
