package mhl

import "strings"

// originalDigests returns, for every path the history's generations list,
// its digest in each format recorded for it: the first recorded with
// action original in that format, else the first recorded in it.
func (h *History) originalDigests() map[string]map[string]string {
	out := map[string]map[string]string{}
	orig := map[string]map[string]bool{}
	for _, g := range h.Generations {
		for _, f := range g.Files {
			for _, x := range f.Hashes {
				m := out[f.Path]
				if m == nil {
					m = map[string]string{}
					out[f.Path] = m
					orig[f.Path] = map[string]bool{}
				}
				v := strings.TrimSpace(x.Value)
				if x.Format != "c4" {
					v = strings.ToLower(v)
				}
				if _, ok := m[x.Format]; !ok {
					m[x.Format] = v
				}
				if x.Action == Original && !orig[f.Path][x.Format] {
					orig[f.Path][x.Format] = true
					m[x.Format] = v
				}
			}
		}
	}
	return out
}
