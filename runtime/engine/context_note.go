package engine

import "fmt"

// ContextWarning says, when the context window is larger than the context
// the model was trained on, that positions past it are untrained ("" when
// the window fits or the file does not say). llama.cpp's server warns the
// same way; the run goes on because a user may want it.
func (i ModelInfo) ContextWarning() string {
	if i.TrainContext <= 0 || i.ContextSize <= i.TrainContext {
		return ""
	}
	return fmt.Sprintf("the context (%d) is larger than the %d tokens the model was trained on: replies past %d tokens may degrade",
		i.ContextSize, i.TrainContext, i.TrainContext)
}
