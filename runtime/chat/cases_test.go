package chat

import (
	"encoding/json"
	"os"
	"testing"

	"vkchat/internal/testenv"
)

// templateCase is one entry of ../shared/templates/{cases,micro_cases}.json.
type templateCase struct {
	Name                string    `json:"name"`
	Template            string    `json:"template"`
	Messages            []Message `json:"messages"`
	BOS                 string    `json:"bos_token"`
	EOS                 string    `json:"eos_token"`
	AddGenerationPrompt bool      `json:"add_generation_prompt"`
	Expected            string    `json:"expected"`
}

func loadCases(t *testing.T, rel string) []templateCase {
	t.Helper()
	b, err := os.ReadFile(testenv.Shared(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []templateCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s: no cases", rel)
	}
	return f.Cases
}

// TestLlamaCppTemplateCases renders llama.cpp's own template test cases
// (and the whitespace-control cases where Jinja2 and llama.cpp agree)
// through FromModel, as the engine does, system fold and built-in fallback
// included, and wants llama.cpp's output byte for byte.
func TestLlamaCppTemplateCases(t *testing.T) {
	for _, file := range []string{"templates/cases.json", "templates/micro_cases.json"} {
		for _, tc := range loadCases(t, file) {
			tmpl, err := FromModel(tc.Template, "llama")
			if err != nil {
				t.Errorf("%s %s: %v", file, tc.Name, err)
				continue
			}
			opts := Options{AddGenerationPrompt: tc.AddGenerationPrompt, BOS: tc.BOS, EOS: tc.EOS}
			got, err := tmpl.RenderWith(tc.Messages, opts)
			if err != nil {
				t.Errorf("%s %s: %v", file, tc.Name, err)
				continue
			}
			if got != tc.Expected {
				t.Errorf("%s %s (template %s, fold %v):\n got %q\nwant %q", file, tc.Name, tmpl.Name(), tmpl.FoldsSystem(), got, tc.Expected)
			}
			// What the engine tokenizes must be the same text.
			segs, err := tmpl.RenderSegmentsWith(tc.Messages, opts)
			if err != nil {
				t.Errorf("%s %s: segments: %v", file, tc.Name, err)
			} else if Join(segs) != tc.Expected {
				t.Errorf("%s %s: segments join to %q", file, tc.Name, Join(segs))
			}
		}
	}
}
