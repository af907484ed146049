package ui

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"vkchat/runtime/engine"
	"vkchat/ui/command"
	"vkchat/ui/conversation"
	"vkchat/ui/helppane"
	"vkchat/ui/input"
	"vkchat/ui/inspector"
	"vkchat/ui/internal/stream"
	"vkchat/ui/keeper"
	"vkchat/ui/panels"
	"vkchat/ui/prompt"
	"vkchat/ui/sampler"
	"vkchat/ui/switcher"
	"vkchat/ui/termtext"
	"vkchat/ui/theme"
	"vkchat/ui/transcript"
)

// Model is the root of the chat UI. It owns the conversation and routes
// messages to the input, the transcript and the panels; it is used by
// pointer because the generation goroutine refers back to it.
type Model struct {
	eng    Engine
	cfg    Config
	info   engine.ModelInfo
	styles theme.Styles
	keys   KeyMap
	help   help.Model

	width, height int

	// conv is the chat itself; the root decides what to say about what
	// it does (its operations return errors and values, not status lines).
	conv  *conversation.Conversation
	smp   *sampler.Sampler // the settings replies are generated with
	stats engine.Stats
	run   panels.Run

	// baseCtx parents every generation; Run sets it to its context.
	baseCtx      context.Context
	gen          *generation
	genSeq       int
	pendingReply bool
	closed       chan struct{} // closed on quit: unblocks the engine's emit
	closeOnce    sync.Once
	wg           *sync.WaitGroup

	cmds     *command.Registry // every slash command, from the components
	input    input.Input
	focus    focusArea
	insp     inspector.Inspector
	inspKeys inspector.KeyMap
	pending  *conversation.Fork // the fork the next generation continues
	tr       transcript.Transcript
	frame    frame // where the last View put the side column
	// hidePanels: f2 left only the core panels (speed, memory, next token).
	hidePanels bool
	pane       helppane.Pane      // F1's keys and commands, /prompt, /chats
	think      *prompt.Thinking   // /think's switches; /prompt
	stops      []string           // /stop: strings that end a reply
	edit       *editing           // /edit: the earlier message being edited
	sw         *switcher.Switcher // /model (the picker over the chat) and /backend
	status     statusLine

	// saver writes conv after every turn and keeps retrying a failed
	// save (persist.go starts its timer).
	saver   *keeper.Keeper
	loadErr error

	now     func() time.Time
	newSeed func() uint64
	copy    keeper.Copier // /copy: the terminal (OSC 52) and the system clipboard
}

type statusLine struct {
	text string
	err  bool
}

func (s *statusLine) Info(text string)  { *s = statusLine{text: text} }
func (s *statusLine) Error(text string) { *s = statusLine{text: text, err: true} }

// New builds the chat UI for eng; colours follow the terminal on stdout.
func New(eng Engine, cfg Config) tea.Model {
	r := lipgloss.NewRenderer(os.Stdout)
	// Ask the terminal for its background now: once the program reads
	// input, the reply to that query would arrive as typed keys.
	r.HasDarkBackground()
	return newModel(eng, cfg, r)
}

func newModel(eng Engine, cfg Config, r *lipgloss.Renderer) *Model {
	st := theme.New(r)
	h := help.New()
	h.Styles = st.Help
	info := eng.Info()
	m := &Model{
		eng:     eng,
		cfg:     cfg,
		info:    info,
		styles:  st,
		keys:    DefaultKeyMap(),
		help:    h,
		stats:   eng.Stats(),
		baseCtx: context.Background(),
		closed:  make(chan struct{}),
		wg:      &sync.WaitGroup{},
		input:   input.New(),
		conv:    conversation.New(info.Completion, cfg.SystemPrompt),
		now:     time.Now,
		newSeed: rand.Uint64,
		copy:    keeper.SystemCopier(os.Stdout),
	}
	m.tr = transcript.New(m.conv, st, r, transcript.Options{SavedIn: cfg.conversationsDir(), ThinkingKey: thinkingKey.Help().Key})
	m.setPlaceholder()
	m.insp, m.inspKeys = inspector.New(), inspector.DefaultKeyMap()
	m.think = prompt.New(cfg.NoThinking, cfg.ReasoningEffort, promptHost{m})
	m.sw = switcher.New(cfg.Picker, cfg.OpenModel != nil, switchHost{m})
	m.saver = keeper.New(m.conv, cfg.conversationsDir(), cfg.SystemPrompt, keeperHost{m})
	m.smp = sampler.New(eng, eng.Params(), cfg.MaxTokens, &m.status, func() uint64 { return m.newSeed() })
	m.cmds = m.commands()
	if cfg.Notice != "" {
		m.setStatus(termtext.Sanitize(cfg.Notice))
	}
	if warn := info.ContextWarning(); warn != "" {
		m.setError(warn)
	}
	if note := info.TemplateNote; note != "" {
		m.setStatus(termtext.Sanitize(note)) // the template was rejected: say why
	}
	if cfg.LoadConversation != "" {
		if err := m.saver.Load(cfg.LoadConversation, m.smp.Params); err != nil {
			m.loadErr = err
			m.setError("could not load: " + err.Error())
		}
	}
	return m
}

// modelName is the model's name, safe to print.
func (m *Model) modelName() string {
	if n := termtext.Sanitize(m.info.Name); n != "" {
		return n
	}
	return "model"
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model. Any step may have failed to autosave; the
// retry timer it asked for is started here.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	model, cmd := m.update(msg)
	if retry := m.saver.RetryCmd(); retry != nil {
		cmd = tea.Batch(cmd, retry)
	}
	return model, cmd
}

func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case keeper.RetryMsg:
		m.saver.HandleRetry(msg)
		return m, nil
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 0), max(msg.Height, 0)
		m.layout() // sizes the components
		if m.sw.Picker != nil {
			return m, m.sw.Update(msg)
		}
		return m, nil
	case modelLoadedMsg:
		m.modelLoaded(msg)
		return m, nil
	case tea.KeyMsg:
		if m.sw.Picker != nil {
			return m, m.sw.Update(msg)
		}
		return m, m.handleKey(msg)
	case tea.MouseMsg:
		m.handleMouse(msg)
		return m, nil
	case stream.Msg:
		return m, tea.Batch(m.handleStream(msg), m.scheduleRedraw())
	case transcript.RedrawMsg:
		m.syncTranscript()
		return m, m.tr.Update(msg)
	case sampler.PreviewMsg:
		m.handlePreview(msg)
		return m, nil
	case inspector.LensMsg:
		m.insp.SetLens(msg)
		return m, nil
	case stream.TickMsg:
		return m, m.handleTick(msg)
	}
	if m.sw.Picker != nil {
		// The picker's own messages (its list, a download's progress).
		return m, m.sw.Update(msg)
	}
	// What the editor's own commands answer (a failed clipboard read).
	return m, m.receiveInput(msg)
}

func (m *Model) setStatus(s string) { m.status.Info(s) }
func (m *Model) setError(s string)  { m.status.Error(s) }
func (m *Model) clearStatus()       { m.status = statusLine{} }

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		// Like llama-cli and ollama: the first ctrl+c stops a reply, a
		// second one (or one with nothing running) quits.
		if m.generating() && !m.gen.canceled {
			m.stopGeneration()
			m.setStatus(statusStoppingCtrlC)
			return nil
		}
		return m.quit()
	case key.Matches(msg, k.Redraw):
		return tea.ClearScreen
	case key.Matches(msg, k.Panels):
		m.hidePanels = !m.hidePanels
		if m.hidePanels {
			m.setStatus("optional panels hidden · f2 shows them")
		} else {
			m.setStatus("optional panels shown where they fit · f2 hides them")
		}
		return nil
	case key.Matches(msg, k.Help):
		m.pane.Toggle()
		return nil
	case m.pane.Shown && msg.Type == tea.KeyEsc:
		m.pane.Close()
		return nil
	case key.Matches(msg, k.Thinking):
		m.toggleThinking()
		return nil
	}
	if cmd, ok := m.smp.Key(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, k.Stop) && m.generating():
		m.stopGeneration()
		return nil
	case msg.Type == tea.KeyEsc && m.edit != nil:
		m.cancelEdit()
		return nil
	case key.Matches(msg, k.Regenerate):
		return m.regenerate()
	case key.Matches(msg, k.BranchPrev):
		m.switchBranch(-1)
		return nil
	case key.Matches(msg, k.BranchNext):
		m.switchBranch(+1)
		return nil
	case key.Matches(msg, k.NewChat):
		m.saver.NewChat()
		return nil
	case key.Matches(msg, k.PageUp):
		m.page(-1)
		return nil
	case key.Matches(msg, k.PageDown):
		m.page(+1)
		return nil
	}
	if m.focus == focusTranscript {
		return m.insp.Key(msg, m.inspKeys, inspectorHost{m})
	}
	switch {
	case key.Matches(msg, m.inspKeys.Inspect):
		m.enterInspector()
	case key.Matches(msg, k.Send):
		return m.submit()
	case key.Matches(msg, k.Newline):
		m.input.InsertNewline()
		m.showInputError()
	default:
		return m.inputKey(msg)
	}
	return nil
}

// handlePreview shows the last distribution re-ranked under the settings
// just changed.
func (m *Model) handlePreview(msg sampler.PreviewMsg) {
	if !m.smp.Current(msg) {
		return
	}
	if !msg.OK {
		if m.status.text != "" && !m.status.err {
			m.setStatus(m.status.text + " · applies from the next token")
		}
		return
	}
	m.insp.ShowPreview(msg.Res, m.smp.Params)
}

// submit sends the typed message or runs the typed command.
func (m *Model) submit() tea.Cmd {
	text := m.input.Value()
	call, err := m.cmds.Parse(text)
	if err == nil {
		m.input.Remember(text)
		m.input.Reset()
		return call.Run()
	}
	if !errors.Is(err, command.ErrNotCommand) {
		// Cleared as a command that ran is: a line left in place had the
		// next command typed onto its end ("/foo/temp"). The history keeps
		// it to correct.
		m.input.Remember(text)
		m.input.Reset()
		m.setError(err.Error() + " · ↑ brings the line back")
		return nil
	}
	if i := strings.Index(text, "//"); i >= 0 && strings.TrimSpace(text[:i]) == "" {
		text = text[:i] + text[i+1:]
	}
	text = m.conv.UserText(text)
	if text == "" && (!m.info.Completion || m.conv.Len() == 0) {
		return nil
	}
	if m.generating() {
		m.setError("a reply is still being written: Esc stops it")
		return nil
	}
	m.input.Remember(m.input.Value())
	m.input.Reset()
	m.clearStatus()
	if m.edit != nil && text != "" {
		if m.gen != nil {
			m.setError("the last reply is still winding down: send the edit again in a moment")
			m.input.SetValue(text)
			return nil
		}
		cmd := m.sendEdit(text)
		m.saver.Save()
		return cmd
	}
	if text != "" {
		m.conv.Append(&conversation.Turn{Role: "user", Content: text})
	}
	m.saver.Save()
	if m.gen != nil {
		// The previous reply is still winding down; start once it has.
		m.pendingReply = true
		return nil
	}
	return m.startGeneration()
}

// regenerate replaces the last reply with a new one.
func (m *Model) regenerate() tea.Cmd {
	if m.gen != nil {
		m.setError("a reply is still being written: Esc stops it first")
		return nil
	}
	last := m.conv.Last()
	if last == nil || (last.Role != "user" && last.Role != "assistant") || (last.Role == "assistant" && m.conv.Len() < 2 && !m.info.Completion) {
		m.setError("nothing to regenerate")
		return nil
	}
	// The old reply stays as a sibling branch of the new one ([ and ]).
	var set *conversation.BranchSet
	if last.Role == "assistant" {
		set = m.conv.OpenBranch(m.conv.Len() - 1)
		if m.focus == focusTranscript {
			m.leaveInspector()
		}
	}
	m.setStatus("regenerating")
	if set != nil {
		m.setStatus("regenerating · the previous reply stays as a branch (alt+, / alt+.)")
	}
	cmd := m.startGeneration()
	if m.gen != nil {
		m.conv.JoinBranch(set, m.gen.reply)
	}
	return cmd
}

// resetChat empties the conversation (the caller saves first).
func (m *Model) resetChat() {
	m.conv.Reset()
	m.run = panels.Run{}
	// The panels show the chat on screen: an empty one fills no context,
	// whatever the engine still caches from the last (it is reused or
	// overwritten by the next reply, which reports its own figures).
	m.stats.ContextUsed, m.stats.KVUsed = 0, 0
	m.insp.Probs = inspector.NextToken()
	if m.focus == focusTranscript {
		m.leaveInspector()
	}
	m.insp.Clear()
	m.tr.Reset()
	m.pendingReply = false
	m.edit = nil
}

// quit saves and ends the program.
func (m *Model) quit() tea.Cmd {
	m.shutdown()
	return tea.Quit
}

// shutdown stops the engine's work and saves; safe to call more than once.
func (m *Model) shutdown() {
	if m.gen != nil {
		m.gen.cancel()
		m.gen.canceled = true
	}
	m.closeOnce.Do(func() { close(m.closed) })
	m.drainPending()
	m.saver.Save()
}

// drainPending applies the events the engine had already queued when the
// program ended (a signal, a quit mid-reply), so the saved reply holds every
// token the user may have seen being generated.
func (m *Model) drainPending() {
	g := m.gen
	if g == nil || g.detached {
		return
	}
	for {
		it, ok := g.ch.TryReceive()
		if !ok || it.End {
			return
		}
		m.applyEvent(g, it.Ev)
	}
}

// waitEngine waits up to d for the generation goroutine to return, so the
// caller can close the engine without a Generate still running in it.
func (m *Model) waitEngine(d time.Duration) error { return stream.WaitDone(m.wg, d) }
