package picker

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"vkchat/models/hub"
	"vkchat/models/store"
	"vkchat/ui/panels"
	"vkchat/ui/termtext"
)

// Every screen is: title bar, a blank line, the body, a blank line, a
// status line and the help. These are the lines around the body.
const (
	topLines    = 2
	statusLines = 2
	// listTop is the lines of the list screen above the list itself: the
	// store directory, a blank line and the column header.
	listTop = 3
)

// View implements tea.Model.
func (m *Model) View() string {
	switch m.screen {
	case screenList:
		return m.listView()
	case screenOffer:
		return m.offerView()
	case screenPulling:
		return m.pullView()
	case screenFailed:
		return m.failedView()
	case screenDone:
		// The alternate screen is about to go; drawing nothing avoids a
		// flash of the last screen in the main one.
		return ""
	}
	return m.frame("looking for models", []string{margin + m.st.Hint.Render("Reading "+m.opts.StoreDir+"…")}, "", m.quitBindings())
}

// frame lays out one full screen of exactly m.height lines, none wider
// than m.width, so the terminal never scrolls or wraps.
func (m *Model) frame(subtitle string, body []string, status string, km help.KeyMap) string {
	title := m.st.TitleBar.Width(m.width).Render(termtext.Truncate(
		margin+m.st.TitleName.Render("vkchat")+m.st.TitleState.Render(" · "+subtitle), m.width))
	helpLines := m.helpLines(km)
	avail := max(0, m.height-topLines-statusLines-len(helpLines))
	if len(body) > avail {
		body = body[:avail]
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, title, "")
	lines = append(lines, body...)
	for len(lines) < m.height-statusLines-len(helpLines) {
		lines = append(lines, "")
	}
	lines = append(lines, "", status)
	lines = append(lines, helpLines...)
	for i, l := range lines {
		lines[i] = termtext.Truncate(l, m.width)
	}
	return strings.Join(lines[:min(len(lines), m.height)], "\n")
}

func (m *Model) helpLines(km help.KeyMap) []string {
	lines := strings.Split(m.help.View(km), "\n")
	for i, l := range lines {
		lines[i] = margin + l
	}
	return lines
}

// wrap breaks s to the screen width after indent, styling each line.
func (m *Model) wrap(style lipgloss.Style, indent, s string) []string {
	var out []string
	for _, l := range strings.Split(ansi.Wrap(s, max(10, m.width-len(indent)-len(margin)), ""), "\n") {
		out = append(out, indent+style.Render(l))
	}
	return out
}

func (m *Model) quitBindings() bindings {
	return bindings{short: []key.Binding{m.keys.Quit}}
}

func (m *Model) listBindings() bindings {
	k := m.keys
	b := bindings{
		short: []key.Binding{k.Up, k.Down, k.Choose, k.PullDefault, k.Quit, k.Help},
		full: [][]key.Binding{
			{k.Up, k.Down, k.PageUp, k.PageDown},
			{k.Home, k.End},
			{k.Choose, k.PullDefault, k.Quit, k.ForceQuit},
		},
	}
	if m.opts.Demo {
		b.full[2] = append(b.full[2], k.Demo)
	}
	return b
}

// withDemo adds the demo key to a screen's short help when it is offered.
func (m *Model) withDemo(keys ...key.Binding) []key.Binding {
	if m.opts.Demo {
		keys = append(keys[:1:1], append([]key.Binding{m.keys.Demo}, keys[1:]...)...)
	}
	return keys
}

func (m *Model) listView() string {
	c := m.cols.fit(m.width)
	body := []string{
		margin + m.st.Label.Render("Models in ") + m.st.Value.Render(m.opts.StoreDir),
		"",
		m.st.Label.Render(c.header()),
	}
	end := min(len(m.models), m.offset+m.rows())
	for i := m.offset; i < end; i++ {
		body = append(body, renderRow(&m.st, c, m.models[i], i == m.cursor, m.width))
	}
	return m.frame("choose a model", body, m.listStatus(), m.listBindings())
}

// listStatus is the line under the list: why the last key did nothing, or
// what the list holds and which part of it is on screen.
func (m *Model) listStatus() string {
	total := len(m.models)
	switch {
	case m.notice != "":
		return margin + m.st.StatusError.Render(m.notice)
	case m.usable == 0:
		return margin + m.st.Notice.Render("None of these files is a usable model: press p to download one.")
	}
	s := plural(total, "model")
	if bad := total - m.usable; bad > 0 {
		s += fmt.Sprintf(", %d unusable", bad)
	}
	if rows := m.rows(); total > rows {
		s += fmt.Sprintf(" · showing %d–%d", m.offset+1, min(total, m.offset+rows))
	}
	return margin + m.st.Hint.Render(s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (m *Model) offerView() string {
	var body []string
	if m.listErr != nil {
		body = append(body, m.wrap(m.st.StatusError, margin, "Could not read the model store: "+m.listErr.Error())...)
	} else {
		body = append(body, m.wrap(m.st.Value, margin, "No models in "+m.opts.StoreDir+" yet.")...)
	}
	offer := "vkchat can download one to start with:"
	if m.embedded {
		offer = "vkchat can download one:"
	}
	body = append(body, "", margin+m.st.Value.Render(offer))
	body = append(body, margin+"  "+m.st.PanelTitle.Render(m.opts.DefaultRef))
	if d := describe(m.opts.DefaultRef); d != "" {
		body = append(body, m.wrap(m.st.Meta, margin+"  ", d)...)
	}
	then, subtitle := " to download it now.", "first run"
	if m.embedded {
		then, subtitle = " to download it; the chat goes on with it, the conversation kept.", "switch model"
	}
	body = append(body, "", margin+m.st.Value.Render("Press ")+m.st.Prompt.Render("Enter")+m.st.Value.Render(then), "")
	body = append(body, m.alternatives()...)
	bk := bindings{short: m.withDemo(m.keys.Download, m.keys.Quit)}
	return m.frame(subtitle, body, "", bk)
}

// describe says in words what an hf: reference points at.
func describe(ref string) string {
	r, err := hub.ParseRef(ref)
	if err != nil || r.Kind != hub.HF {
		return ""
	}
	s := r.Repo + " by " + r.Owner + " on Hugging Face"
	if r.Quant != "" {
		s += ", " + r.Quant
	}
	return s
}

// alternatives are the ways on without a download: both the offer and the
// failure screen show them, since "offline" is a common first run.
func (m *Model) alternatives() []string {
	cmd := func(s string) string { return margin + "  " + m.st.Value.Render(s) }
	var demoLines []string
	if m.opts.Demo {
		label := "To try vkchat now, without a download:"
		if m.embedded {
			label = "To switch now, without a download:"
		}
		demoLines = []string{
			margin + m.st.Label.Render(label),
			margin + "  " + m.st.Value.Render("press ") + m.st.Prompt.Render("d") + m.st.Value.Render(" for the bundled demo model") +
				m.st.Hint.Render("   (tiny stories, not chat)"),
		}
	}
	if m.embedded {
		// Inside the chat the way to another file is /model, and a
		// download by name needs a shell.
		return append(demoLines,
			margin+m.st.Label.Render("To switch to a model file you already have:"),
			cmd("/model FILE.gguf")+m.st.Hint.Render("   (esc, then type it)"),
			margin+m.st.Label.Render("To download a different model, in a shell:"),
			cmd("vkchat pull hf:OWNER/REPO[:QUANT]")+m.st.Hint.Render("   then /model again"),
		)
	}
	return append(demoLines,
		margin+m.st.Label.Render("To chat with a model file you already have:"),
		cmd("vkchat chat --model FILE.gguf")+m.st.Hint.Render("   or   ")+m.st.Value.Render("make run MODEL=path"),
		margin+m.st.Label.Render("To download a different model:"),
		cmd("vkchat pull hf:OWNER/REPO[:QUANT]")+m.st.Hint.Render("   then run vkchat chat again"),
	)
}

func (m *Model) pullView() string {
	body := []string{
		margin + m.st.Value.Render("Downloading ") + m.st.PanelTitle.Render(m.opts.DefaultRef),
		margin + m.st.Label.Render("into ") + m.st.Value.Render(m.opts.StoreDir),
		"",
	}
	p := m.prog
	switch {
	case !m.progSeen:
		body = append(body, margin+m.st.Hint.Render("Looking up the model…"))
	case p.Total > 0:
		frac := math.Min(1, float64(p.Done)/float64(p.Total))
		bar := panels.Bar(m.st, frac, min(50, m.width-2*len(margin)-5))
		pct := m.st.Value.Render(fmt.Sprintf(" %3.0f%%", frac*100))
		body = append(body, margin+m.st.Value.Render(p.File), margin+bar+pct, margin+m.st.Meta.Render(progressLine(p)))
		if p.Done >= p.Total {
			body = append(body, "", margin+m.st.Hint.Render("Checking the file…"))
		}
	default:
		// No length from the server: bytes and rate, but no bar to fill.
		body = append(body, margin+m.st.Value.Render(p.File), margin+m.st.Meta.Render(progressLine(p)))
	}
	body = append(body, "", margin+m.st.Hint.Render("Stopping keeps what has arrived; the next download of this model resumes it."))
	bk := bindings{short: []key.Binding{m.keys.Stop}}
	return m.frame("downloading a model", body, "", bk)
}

// progressLine is the numbers under the bar: bytes, rate and time left.
func progressLine(p hub.Progress) string {
	parts := []string{store.FormatSize(p.Done)}
	if p.Total > 0 {
		parts[0] += " of " + store.FormatSize(p.Total)
	}
	if p.Rate > 0 {
		parts = append(parts, store.FormatSize(int64(p.Rate))+"/s")
	}
	if p.ETA > 0 {
		parts = append(parts, formatETA(p.ETA)+" left")
	}
	return strings.Join(parts, " · ")
}

func formatETA(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func (m *Model) failedView() string {
	body := []string{margin + m.st.Error.Render("Could not download ") + m.st.PanelTitle.Render(m.opts.DefaultRef), ""}
	body = append(body, m.wrap(m.st.StatusError, margin, m.pullErr.Error())...)
	body = append(body, "")
	body = append(body, m.alternatives()...)
	body = append(body, "")
	body = append(body, m.wrap(m.st.Hint, margin, "Models are kept in "+m.opts.StoreDir+"; set VKCHAT_MODELS to use another folder.")...)
	bk := bindings{short: m.withDemo(m.keys.Retry, m.keys.Exit)}
	return m.frame("download failed", body, "", bk)
}
