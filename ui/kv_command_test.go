package ui

import (
	"strings"
	"testing"
)

// TestKVCommand: /kv says what the KV cache is kept in — one type, or the
// keys' and the values' apart — and that it is chosen at load, not in the
// chat.
func TestKVCommand(t *testing.T) {
	for _, c := range []struct{ kv, want string }{
		{"q8_0", "keys and values in q8_0"},
		{"q8_0/f16", "keys in q8_0, values in f16"},
	} {
		eng := newFakeEngine()
		eng.info.KVType = c.kv
		m := newTestModel(t, eng, Config{})
		h := newHarness(t, m)
		h.size(120, 40)
		h.typeText("/kv")
		h.key("enter")
		if m.status.err || !strings.Contains(m.status.text, "KV cache: "+c.want) || !strings.Contains(m.status.text, "--kv-type") {
			t.Errorf("%s: status %+v", c.kv, m.status)
		}
	}
}
