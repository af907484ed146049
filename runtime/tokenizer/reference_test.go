package tokenizer

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"vkchat/internal/testenv"
	"vkchat/runtime/gguf"
)

type referenceRun struct {
	Prompt       string   `json:"prompt"`
	PromptTokens []int32  `json:"prompt_tokens"`
	Greedy       []int32  `json:"greedy"`
	PiecesHex    []string `json:"pieces_hex"`
	Text         string   `json:"text"`
}

// TestReferenceRuns checks against llama.cpp's own runs on the shared models:
// the prompt as llama.cpp tokenized it (with BOS), the bytes of every
// generated token, and the generated text.
func TestReferenceRuns(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "reference"), "*.json"))
	if len(files) == 0 {
		t.Skip("no reference runs")
	}
	models := map[string]*Tokenizer{}
	for _, path := range files {
		base := filepath.Base(path)
		model := base[:strings.IndexByte(base, '.')] + ".gguf"
		if strings.HasPrefix(base, "stories260K.") {
			model = "stories260K.gguf"
		}
		t.Run(base, func(t *testing.T) {
			tk := models[model]
			if tk == nil {
				f, err := gguf.Open(testenv.Model(t, model))
				if err != nil {
					t.Fatal(err)
				}
				tk, err = FromGGUF(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				models[model] = tk
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var run referenceRun
			if err := json.Unmarshal(raw, &run); err != nil {
				t.Fatal(err)
			}
			if got := tk.Encode(run.Prompt, true, false); !slices.Equal(got, run.PromptTokens) {
				t.Errorf("prompt %q:\n got  %v\n want %v", run.Prompt, got, run.PromptTokens)
			}
			s := tk.NewStream()
			var streamed strings.Builder
			for i, id := range run.Greedy {
				want, _ := hex.DecodeString(run.PiecesHex[i])
				if got := tk.Piece(id); string(got) != string(want) {
					t.Errorf("token %d: Piece = %x, want %x", id, got, want)
				}
				streamed.WriteString(s.Add(id))
			}
			streamed.WriteString(s.Flush())
			if streamed.String() != run.Text {
				t.Errorf("stream:\n got  %q\n want %q", streamed.String(), run.Text)
			}
		})
	}
}
