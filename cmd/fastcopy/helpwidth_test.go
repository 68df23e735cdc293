package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"golang.org/x/text/width"
)

// columns is the width a line takes on a terminal: East Asian wide and
// fullwidth characters take two.
func columns(s string) int {
	n := 0
	for _, r := range s {
		switch width.LookupRune(r).Kind() {
		case width.EastAsianWide, width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}

// prose reports whether a help line is running text that a wrap may
// join with the next, rather than a table row, a list item or a heading.
func prose(line string) bool {
	return line != "" && strings.ToUpper(line) != line && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "-") &&
		!strings.Contains(line, "  ") && !strings.HasSuffix(line, ":")
}

// raggedWidth is how short a line of running text may end: text is wrapped
// near 75 columns, with a new line allowed at the end of a sentence.
const raggedWidth = 64

// TestHelpWrapped keeps every command's --help within helpWidth columns,
// flags included, and its running text wrapped at that one width: a line
// of prose is never so short that the next line's first word would have
// fitted on it ("Symlinks named on the" / "command line are followed").
func TestHelpWrapped(t *testing.T) {
	root := newRootCommand(&output{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var buf bytes.Buffer
		c.SetOut(&buf)
		if err := c.Help(); err != nil {
			t.Fatalf("%s: %v", c.CommandPath(), err)
		}
		for i, line := range strings.Split(buf.String(), "\n") {
			if columns(line) > helpWidth {
				t.Errorf("%s --help, line %d is %d columns, over %d: %q", c.CommandPath(), i+1, columns(line), helpWidth, line)
			}
		}
		lines := strings.Split(c.Long, "\n")
		for i := 0; i+1 < len(lines); i++ {
			a, b := lines[i], lines[i+1]
			if !prose(a) || !prose(b) {
				continue
			}
			first, _, _ := strings.Cut(b, " ")
			if columns(a)+1+columns(first) <= raggedWidth {
				t.Errorf("%s --help wraps early: %q could take %q from the next line", c.CommandPath(), a, first)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
