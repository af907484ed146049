package ui

import (
	"strings"
	"testing"
)

// The title bar says which backend runs and, when the engine chose it, why
// (issue 13: "the chat header says which was chosen and why").
func TestTitleShowsBackendReason(t *testing.T) {
	for _, tc := range []struct{ reason, want string }{
		{"", "vulkan Fake GPU"},
		{"auto: the only Vulkan device is a CPU", "(auto: the only Vulkan device is a CPU)"},
		{"asked\x1b[31m for", "(asked for)"},
	} {
		eng := newFakeEngine()
		eng.info.BackendReason = tc.reason
		m := newTestModel(t, eng, Config{})
		title := m.titleBar(200)
		if !strings.Contains(title, tc.want) {
			t.Errorf("reason %q: title %q lacks %q", tc.reason, title, tc.want)
		}
		if tc.reason == "" && strings.Contains(title, "(") {
			t.Errorf("no reason: title %q has a parenthesis", title)
		}
	}
}

// The title bar shows the context window and, when it differs, the
// context the model was trained on; a window beyond that is warned about
// when the chat opens.
func TestTitleShowsContext(t *testing.T) {
	for _, tc := range []struct {
		ctx, train int
		want, warn string
	}{
		{256, 256, "ctx 256 ·", ""},
		{128, 256, "ctx 128 of 256 trained", ""},
		{2048, 256, "ctx 2048 of 256 trained", "the context (2048) is larger than the 256 tokens the model was trained on"},
	} {
		eng := newFakeEngine()
		eng.info.ContextSize, eng.info.TrainContext = tc.ctx, tc.train
		m := newTestModel(t, eng, Config{})
		if title := m.titleBar(200); !strings.Contains(title, tc.want) {
			t.Errorf("ctx %d of %d: title %q lacks %q", tc.ctx, tc.train, title, tc.want)
		}
		if tc.warn == "" && m.status.err {
			t.Errorf("ctx %d of %d: status %+v, want no warning", tc.ctx, tc.train, m.status)
		}
		if tc.warn != "" && (!m.status.err || !strings.Contains(m.status.text, tc.warn)) {
			t.Errorf("ctx %d of %d: status %+v, want %q", tc.ctx, tc.train, m.status, tc.warn)
		}
	}
}
