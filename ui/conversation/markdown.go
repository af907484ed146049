package conversation

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"vkchat/runtime/chat"
)

// IsMarkdown reports whether /save writes path as Markdown: its name ends
// in ".md" or ".markdown". Such a file is for reading; /load reads JSON.
func IsMarkdown(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown":
		return true
	}
	return false
}

// Markdown is the conversation on screen (the branch shown) as a
// Markdown document: a title naming the model, the system prompt, then
// each turn under a heading, a reply's reasoning as a quote before its
// answer. Replies are Markdown already and stay as written; a user's text
// is kept as typed.
func (c *Conversation) Markdown(meta Meta, now time.Time) string {
	var b strings.Builder
	name := meta.ModelName
	if name == "" {
		name = filepath.Base(meta.Model)
	}
	if name == "" || name == "." {
		name = "a model"
	}
	fmt.Fprintf(&b, "# Chat with %s\n\n", name)
	fmt.Fprintf(&b, "_Saved by vkchat on %s._\n", now.Format("2006-01-02 15:04"))
	if c.system != "" && !c.completion {
		b.WriteString("\n## System\n\n")
		b.WriteString(strings.TrimSpace(c.system))
		b.WriteString("\n")
	}
	for _, t := range c.turns {
		text := t.Content
		if t.Streaming && text == "" && t.Think == nil {
			continue
		}
		switch t.Role {
		case chat.RoleUser:
			b.WriteString("\n## You\n\n")
		case chat.RoleAssistant:
			fmt.Fprintf(&b, "\n## %s\n\n", name)
		default:
			fmt.Fprintf(&b, "\n## %s\n\n", t.Role)
		}
		if t.Think != nil && strings.TrimSpace(t.Think.Text) != "" {
			b.WriteString("> **Reasoning**\n>\n")
			for _, l := range strings.Split(strings.TrimSpace(t.Think.Text), "\n") {
				b.WriteString(strings.TrimRight("> "+l, " ") + "\n")
			}
			b.WriteString("\n")
		}
		b.WriteString(strings.TrimSpace(text))
		b.WriteString("\n")
	}
	return b.String()
}

// WriteMarkdown writes the conversation as Markdown to path, replacing it
// atomically as Write does.
func WriteMarkdown(path string, c *Conversation, meta Meta, now time.Time) error {
	return writeAtomic(path, []byte(c.Markdown(meta, now)))
}
