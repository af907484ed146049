package chat

// NextPlaceholder stands for the message the user has not written yet
// when a prompt is shown before it exists (/prompt in a fresh chat or
// after a reply).
const NextPlaceholder = "(your next message)"

// ForNextReply is the conversation the next reply will be generated from.
// A reply always answers a user turn, but a conversation that is empty or
// ends with a reply has none yet, and chat templates are written for
// conversations that end with one: Qwen3's fails on an empty list
// ("messages[item] is undefined"), re-renders a final reply's reasoning
// (which the content markers cannot follow) and, with a generation prompt,
// opens a second assistant turn after the first. So when the last turn is
// not the user's, a user turn holding next (NextPlaceholder when empty) is
// appended; added reports that it was.
func ForNextReply(msgs []Message, next string) (out []Message, added bool) {
	if n := len(msgs); n > 0 && msgs[n-1].Role == RoleUser {
		if next == "" {
			return msgs, false
		}
	}
	if next == "" {
		next = NextPlaceholder
	}
	out = append(make([]Message, 0, len(msgs)+1), msgs...)
	return append(out, Message{Role: RoleUser, Content: next}), true
}
