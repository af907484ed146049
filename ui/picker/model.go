package picker

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"vkchat/models/demo"
	"vkchat/models/hub"
	"vkchat/models/store"
	"vkchat/ui/theme"
)

// screen is what the picker is showing.
type screen int

const (
	screenLoading screen = iota // reading the store
	screenList                  // models to choose from
	screenOffer                 // empty store: offer the default model
	screenPulling               // download in progress
	screenFailed                // download failed: say why and what else to do
	screenDone                  // result set, the program is quitting
)

// Screen sizes used until the terminal reports its own.
const (
	defaultWidth  = 80
	defaultHeight = 24
)

// Model is the picker's tea.Model. Build it with New; Run drives it.
type Model struct {
	opts Options // defaults resolved
	ctx  context.Context

	st     theme.Styles
	keys   KeyMap
	help   help.Model
	width  int
	height int

	screen  screen
	listErr error // the store could not be read
	models  []store.Model
	cols    columns // measured over all models, so paging does not shift them
	cursor  int     // index in models; never an unusable one while one is usable
	offset  int     // first model on screen
	usable  int     // models that can be chosen
	notice  string  // one line under the list, cleared by the next key

	// The download in flight. gen tells its messages from those of an
	// earlier attempt, which may still arrive after a retry.
	gen      int
	cancel   context.CancelFunc
	finished chan struct{} // closed when the Pull goroutine has returned
	progCh   chan hub.Progress
	doneCh   chan pulledMsg
	prog     hub.Progress
	progSeen bool
	pullErr  error

	path string
	err  error

	embedded bool // inside the chat (/model): see Embedded
}

type listedMsg struct {
	models []store.Model
	err    error
}

type progressMsg struct {
	gen int
	p   hub.Progress
}

type pulledMsg struct {
	gen  int
	path string
	err  error
}

func newModel(opts Options, r *lipgloss.Renderer) *Model {
	st := theme.New(r)
	h := help.New()
	h.Styles = st.Help
	m := &Model{
		opts:   resolve(opts),
		ctx:    context.Background(),
		st:     st,
		keys:   DefaultKeyMap(),
		help:   h,
		width:  defaultWidth,
		height: defaultHeight,
	}
	m.setSize(defaultWidth, defaultHeight)
	return m
}

// Init reads the store. It is a command, not work done in New, so a slow
// disk shows the loading screen instead of a blank terminal.
func (m *Model) Init() tea.Cmd {
	list := m.opts.List
	return func() tea.Msg {
		models, err := list()
		return listedMsg{models: models, err: err}
	}
}

// Result is the outcome once the program has ended: the chosen model's
// path, or ErrCanceled, or the *PullError of a failed download.
func (m *Model) Result() (string, error) {
	if m.screen != screenDone {
		return "", ErrCanceled
	}
	return m.path, m.err
}

// Done reports that the user chose (or gave up): Result holds the
// outcome, and the command Update returned with it only quits.
func (m *Model) Done() bool { return m.screen == screenDone }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.setSize(msg.Width, msg.Height)
		return m, nil
	case listedMsg:
		if m.screen == screenLoading { // Init again (a restarted program) must not undo a choice
			m.listed(msg)
		}
		return m, nil
	case progressMsg:
		if msg.gen != m.gen || m.screen != screenPulling {
			return m, nil
		}
		m.prog, m.progSeen = msg.p, true
		return m, m.next()
	case pulledMsg:
		return m, m.pulled(msg)
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) setSize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 8)
	m.help.Width = m.width - len(margin)
	m.scroll()
}

func (m *Model) listed(msg listedMsg) {
	if msg.err != nil || len(msg.models) == 0 {
		m.listErr = msg.err
		m.screen = screenOffer
		return
	}
	m.models = msg.models
	m.usable = 0
	for _, sm := range m.models {
		if sm.Err == nil {
			m.usable++
		}
	}
	m.cols = measure(m.models)
	m.screen = screenList
	m.moveTo(0, +1)
}

func (m *Model) key(k tea.KeyMsg) tea.Cmd {
	m.notice = ""
	if m.screen == screenFailed {
		// Every key but r leaves, ctrl+c included: the caller prints the
		// error, which the user would otherwise lose with the screen.
		if key.Matches(k, m.keys.Retry) {
			return m.startPull()
		}
		if m.opts.Demo && key.Matches(k, m.keys.Demo) {
			return m.finish(demo.Ref, nil)
		}
		return m.finish("", &PullError{Ref: m.opts.DefaultRef, Err: m.pullErr})
	}
	if key.Matches(k, m.keys.ForceQuit) {
		return m.finish("", ErrCanceled)
	}
	switch m.screen {
	case screenLoading:
		if key.Matches(k, m.keys.Quit) {
			return m.finish("", ErrCanceled)
		}
	case screenList:
		return m.listKey(k)
	case screenOffer:
		switch {
		case key.Matches(k, m.keys.Download), key.Matches(k, m.keys.PullDefault):
			return m.startPull()
		case m.opts.Demo && key.Matches(k, m.keys.Demo):
			return m.finish(demo.Ref, nil)
		case key.Matches(k, m.keys.Quit):
			return m.finish("", ErrCanceled)
		case key.Matches(k, m.keys.Help):
			m.help.ShowAll = !m.help.ShowAll
		}
	case screenPulling:
		if key.Matches(k, m.keys.Stop) {
			return m.finish("", ErrCanceled)
		}
	}
	return nil
}

func (m *Model) listKey(k tea.KeyMsg) tea.Cmd {
	page := max(1, m.rows()-1) // keep one row of context across a page turn
	switch {
	case key.Matches(k, m.keys.Choose):
		sel := m.models[m.cursor]
		if sel.Err != nil {
			// Only reached when no model is usable at all.
			m.notice = sel.Name + " cannot be used: " + reason(sel)
			return nil
		}
		return m.finish(sel.Path, nil)
	case key.Matches(k, m.keys.PullDefault):
		return m.startPull()
	case m.opts.Demo && key.Matches(k, m.keys.Demo):
		return m.finish(demo.Ref, nil)
	case key.Matches(k, m.keys.Quit):
		return m.finish("", ErrCanceled)
	case key.Matches(k, m.keys.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(k, m.keys.Up):
		m.moveTo(m.cursor-1, -1)
	case key.Matches(k, m.keys.Down):
		m.moveTo(m.cursor+1, +1)
	case key.Matches(k, m.keys.PageUp):
		m.moveTo(m.cursor-page, -1)
	case key.Matches(k, m.keys.PageDown):
		m.moveTo(m.cursor+page, +1)
	case key.Matches(k, m.keys.Home):
		m.moveTo(0, +1)
	case key.Matches(k, m.keys.End):
		m.moveTo(len(m.models)-1, -1)
	}
	m.scroll()
	return nil
}

// moveTo puts the cursor on the usable model nearest to i, looking in dir
// first: unusable models are shown but cannot be selected. With no usable
// model at all the cursor just goes to i, so the row can say why.
func (m *Model) moveTo(i, dir int) {
	n := len(m.models)
	if n == 0 {
		return
	}
	i = max(0, min(i, n-1))
	for _, d := range []int{dir, -dir} {
		for j := i; j >= 0 && j < n; j += d {
			if m.models[j].Err == nil {
				m.cursor = j
				m.scroll()
				return
			}
		}
	}
	if m.usable == 0 {
		m.cursor = i
	}
	m.scroll()
}

// rows is how many models fit on the list screen.
func (m *Model) rows() int {
	return max(1, m.height-topLines-listTop-statusLines-len(m.helpLines(m.listBindings())))
}

// scroll keeps the cursor on screen and the screen full.
func (m *Model) scroll() {
	rows := m.rows()
	m.offset = min(m.offset, m.cursor)
	m.offset = max(m.offset, m.cursor-rows+1)
	m.offset = max(0, min(m.offset, len(m.models)-rows))
}

// finish records the outcome and ends the program.
func (m *Model) finish(path string, err error) tea.Cmd {
	m.path, m.err = path, err
	m.screen = screenDone
	m.stopPull()
	return tea.Quit
}

// startPull downloads the default model on its own goroutine. Progress
// reports go through a one-slot channel that keeps only the newest, so a
// slow screen never holds up the download.
func (m *Model) startPull() tea.Cmd {
	m.stopPull()
	m.gen++
	ctx, cancel := context.WithCancel(m.ctx)
	prog := make(chan hub.Progress, 1)
	done := make(chan pulledMsg, 1)
	finished := make(chan struct{})
	m.cancel, m.finished, m.progCh, m.doneCh = cancel, finished, prog, done
	m.screen = screenPulling
	m.prog, m.progSeen, m.pullErr = hub.Progress{}, false, nil

	gen, pull, ref := m.gen, m.opts.Pull, m.opts.DefaultRef // for the goroutine
	go func() {
		defer close(finished)
		path, err := pull(ctx, ref, func(p hub.Progress) { latest(prog, p) })
		done <- pulledMsg{gen: gen, path: path, err: err}
	}()
	return m.next()
}

// latest puts p in the one-slot channel ch, replacing a report the screen
// has not taken yet. Only the Pull goroutine sends, so after the drain the
// send cannot block.
func latest(ch chan hub.Progress, p hub.Progress) {
	select {
	case ch <- p:
		return
	default:
	}
	select {
	case <-ch:
	default:
	}
	ch <- p
}

// next waits for the download's next report or its end.
func (m *Model) next() tea.Cmd {
	// Copied: the command runs on another goroutine than Update.
	prog, done, gen := m.progCh, m.doneCh, m.gen
	return func() tea.Msg {
		select {
		case p := <-prog:
			return progressMsg{gen: gen, p: p}
		case r := <-done:
			return r
		}
	}
}

func (m *Model) pulled(msg pulledMsg) tea.Cmd {
	if msg.gen != m.gen || m.screen != screenPulling {
		return nil // an abandoned attempt, or the user already left
	}
	m.stopPull()
	if msg.err != nil {
		m.pullErr = msg.err
		m.screen = screenFailed
		return nil
	}
	return m.finish(msg.path, nil)
}

// stopPull cancels the download in flight, if any.
func (m *Model) stopPull() {
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
}

// waitPull waits up to d for the Pull goroutine to return.
func (m *Model) waitPull(d time.Duration) {
	if m.finished == nil {
		return
	}
	select {
	case <-m.finished:
	case <-time.After(d):
	}
}
