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
