// Package theme holds every colour and text attribute the chat UI uses, so
// the look can be changed in one place and tests can render without colour.
package theme

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
)

// HeatLevels is how many colours the probability heatmap uses.
const HeatLevels = 5

// Styles are built for one lipgloss renderer: the renderer decides the
// colour profile, so a test renderer with the Ascii profile yields plain
// text and the same code draws in colour on a real terminal.
type Styles struct {
	TitleBar   lipgloss.Style
	TitleName  lipgloss.Style
	TitleState lipgloss.Style
	Busy       lipgloss.Style

	UserLabel      lipgloss.Style
	UserText       lipgloss.Style
	AssistantLabel lipgloss.Style
	AssistantText  lipgloss.Style
	SystemText     lipgloss.Style
	Meta           lipgloss.Style
	Code           lipgloss.Style
	CodeFence      lipgloss.Style
	CodeGutter     lipgloss.Style
	Notice         lipgloss.Style
	Error          lipgloss.Style
	Hint           lipgloss.Style
	Selected       lipgloss.Style
	Heat           [HeatLevels]lipgloss.Style
	// A speculative reply's tokens while each is drawn on its own (the
	// inspector): a draft the target accepted, the target's token in
	// place of a rejected draft, and the bonus token of a round whose
	// drafts were all kept.
	SpecAccepted, SpecCorrected, SpecBonus lipgloss.Style

	PanelBorder lipgloss.Style
	PanelTitle  lipgloss.Style
	Label       lipgloss.Style
	Value       lipgloss.Style
	Dim         lipgloss.Style
	BarFill     lipgloss.Style
	BarEmpty    lipgloss.Style
	Spark       lipgloss.Style
	Sampled     lipgloss.Style
	Cut         lipgloss.Style

	Separator   lipgloss.Style
	StatusInfo  lipgloss.Style
	StatusError lipgloss.Style
	Prompt      lipgloss.Style
	InputText   lipgloss.Style
	Placeholder lipgloss.Style
	Cursor      lipgloss.Style

	Help help.Styles
}

// New builds the styles for r.
func New(r *lipgloss.Renderer) Styles {
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	var (
		accent  = c("#5A56E0", "#8B87FF")
		user    = c("#0F7B6C", "#4FD6BE")
		subtle  = c("#8A8A8A", "#6C6C6C")
		faint   = c("#B8B8B8", "#4A4A4A")
		text    = c("#1A1A1A", "#E4E4E4")
		warn    = c("#A15C00", "#FFB454")
		bad     = c("#C4262E", "#FF6B6B")
		codeBG  = c("#F2F2F2", "#262626")
		panelBG = c("#E8E8F8", "#303048")
	)
	s := Styles{
		TitleBar:   r.NewStyle().Background(panelBG).Foreground(text),
		TitleName:  r.NewStyle().Background(panelBG).Foreground(accent).Bold(true),
		TitleState: r.NewStyle().Background(panelBG).Foreground(subtle),
		Busy:       r.NewStyle().Background(panelBG).Foreground(warn).Bold(true),

		UserLabel:      r.NewStyle().Foreground(user).Bold(true),
		UserText:       r.NewStyle().Foreground(user),
		AssistantLabel: r.NewStyle().Foreground(accent).Bold(true),
		AssistantText:  r.NewStyle(),
		SystemText:     r.NewStyle().Foreground(subtle).Italic(true),
		Meta:           r.NewStyle().Foreground(subtle),
		Code:           r.NewStyle().Background(codeBG),
		CodeFence:      r.NewStyle().Background(codeBG).Foreground(subtle),
		CodeGutter:     r.NewStyle().Foreground(faint),
		Notice:         r.NewStyle().Foreground(warn),
		Error:          r.NewStyle().Foreground(bad).Bold(true),
		Hint:           r.NewStyle().Foreground(subtle),
		Selected:       r.NewStyle().Reverse(true).Bold(true),
		SpecAccepted:   r.NewStyle().Foreground(c("#1B7F3A", "#3DDC84")).Underline(true),
		SpecCorrected:  r.NewStyle().Foreground(c("#C4262E", "#FF5F5F")).Underline(true),
		SpecBonus:      r.NewStyle().Foreground(c("#1B7F3A", "#3DDC84")).Bold(true),
		Heat: [HeatLevels]lipgloss.Style{
			r.NewStyle().Foreground(c("#C4262E", "#FF5F5F")),
			r.NewStyle().Foreground(c("#C25E00", "#FF9F43")),
			r.NewStyle().Foreground(c("#8A7A00", "#F5D547")),
			r.NewStyle().Foreground(c("#4D8A00", "#A8E05F")),
			r.NewStyle().Foreground(c("#1B7F3A", "#3DDC84")),
		},

		PanelBorder: r.NewStyle().Foreground(faint),
		PanelTitle:  r.NewStyle().Foreground(accent).Bold(true),
		Label:       r.NewStyle().Foreground(subtle),
		Value:       r.NewStyle().Foreground(text),
		Dim:         r.NewStyle().Foreground(faint),
		BarFill:     r.NewStyle().Foreground(accent),
		BarEmpty:    r.NewStyle().Foreground(faint),
		Spark:       r.NewStyle().Foreground(user),
		Sampled:     r.NewStyle().Foreground(user).Bold(true),
		Cut:         r.NewStyle().Foreground(faint).Faint(true),

		Separator:   r.NewStyle().Foreground(faint),
		StatusInfo:  r.NewStyle().Foreground(subtle),
		StatusError: r.NewStyle().Foreground(bad),
		Prompt:      r.NewStyle().Foreground(accent).Bold(true),
		InputText:   r.NewStyle(),
		Placeholder: r.NewStyle().Foreground(subtle),
		Cursor:      r.NewStyle().Reverse(true),
	}
	key := r.NewStyle().Foreground(subtle).Bold(true)
	desc := r.NewStyle().Foreground(subtle)
	sep := r.NewStyle().Foreground(faint)
	s.Help = help.Styles{
		Ellipsis:       sep,
		ShortKey:       key,
		ShortDesc:      desc,
		ShortSeparator: sep,
		FullKey:        key,
		FullDesc:       desc,
		FullSeparator:  sep,
	}
	return s
}

// HeatLevel maps a probability to one of the heatmap colours: the less
// likely the chosen token was, the hotter (lower index) its colour.
func HeatLevel(p float32) int {
	switch {
	case p < 0.10:
		return 0
	case p < 0.30:
		return 1
	case p < 0.60:
		return 2
	case p < 0.90:
		return 3
	default:
		return 4
	}
}
