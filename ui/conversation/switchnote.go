package conversation

import "fmt"

// MarkSwitch notes where the replies of the model that was loaded
// (oldName) end, since the transcript labels every reply with the model
// now loaded (newName). A model that wrote nothing gets no note: with no
// reply at all there is nothing to mark, and after an earlier switch that
// note now leads to the new model.
func (c *Conversation) MarkSwitch(oldName, newName string) {
	turns := c.Turns()
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		for j, n := range t.Notes {
			if n.SwitchedFrom != "" {
				t.Notes[j].Text = switchNote(n.SwitchedFrom, newName)
				return
			}
		}
		if t.Role == "assistant" && (t.Content != "" || len(t.Steps) > 0 || t.Think != nil) {
			last := c.Last()
			last.Notes = append(last.Notes, Note{Kind: NoteInfo, Text: switchNote(oldName, newName), SwitchedFrom: oldName})
			return
		}
	}
}

func switchNote(from, to string) string {
	return fmt.Sprintf("the replies above are %s's; %s continues from here", from, to)
}
