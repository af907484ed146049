package ui

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMECommandTable: the README's command table and the command
// registry name the same commands. Every registered command has a row
// (its name in the first column), and every /name in the first column is
// a registered name or alias, so a command added, renamed or dropped in
// its component shows here until the README follows.
func TestREADMECommandTable(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i := strings.Index(readme, "### Commands\n")
	if i < 0 {
		t.Fatal("README.md has no ### Commands section")
	}
	section := readme[i:]
	if j := strings.Index(section[1:], "\n### "); j >= 0 {
		section = section[:j+1]
	}
	name := regexp.MustCompile("`/([a-z?_-]+)")
	inTable := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `/") || len(cells) < 2 {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[0], -1) {
			inTable[m[1]] = true
		}
	}
	if len(inTable) == 0 {
		t.Fatal("README.md's command table has no rows")
	}
	reg := testRegistry(t)
	for _, c := range reg.Commands() {
		if !inTable[c.Name] {
			t.Errorf("/%s (%s) has no row in README.md's command table", c.Name, c.Help)
		}
	}
	for n := range inTable {
		if _, ok := reg.Lookup(n); !ok {
			t.Errorf("README.md's command table names /%s, which no component declares", n)
		}
	}
}
