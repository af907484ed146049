// Package chat renders a conversation into the prompt text a model expects,
// using the model's own Jinja chat template when it has one.
package chat

// Roles used in messages.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}
