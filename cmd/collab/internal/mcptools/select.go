package mcptools

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// DefaultToolsets are the toolsets served when Selection.Toolsets is
// empty: what an agent triaging work needs, small enough for its context.
var DefaultToolsets = []string{"issue", "mr", "build", "label", "project"}

// Selection says which tools are served.
type Selection struct {
	// Toolsets are the nouns served; empty means DefaultToolsets, and
	// "all" serves every toolset.
	Toolsets []string
	// Tools are served on top of the toolsets, by tool name.
	Tools []string
	// Exclude removes tools by name, whatever else selects them.
	Exclude []string
	// ReadOnly serves no tool that writes. No other field lifts it.
	ReadOnly bool
}

// Select returns the specs sel serves, in the order of specs. A toolset or
// tool name that no spec has is an error naming it and the known ones.
func (sel Selection) Select(specs []Spec) ([]Spec, error) {
	sets, names := map[string]bool{}, map[string]bool{}
	for _, s := range specs {
		sets[s.Toolset], names[s.Name] = true, true
	}
	toolsets := sel.Toolsets
	if len(toolsets) == 0 {
		toolsets = DefaultToolsets
	}
	all := slices.Contains(toolsets, "all")
	if err := known("toolset", toolsets, sets, "all"); err != nil {
		return nil, err
	}
	if err := known("tool", sel.Tools, names, ""); err != nil {
		return nil, err
	}
	if err := known("tool", sel.Exclude, names, ""); err != nil {
		return nil, err
	}
	var out []Spec
	for _, s := range specs {
		on := all || slices.Contains(toolsets, s.Toolset) || slices.Contains(sel.Tools, s.Name)
		if !on || slices.Contains(sel.Exclude, s.Name) || (sel.ReadOnly && s.Writes) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// known fails on the first of got that is not in have (nor extra).
func known(what string, got []string, have map[string]bool, extra string) error {
	for _, g := range got {
		if !have[g] && g != extra {
			list := make([]string, 0, len(have)+1)
			for h := range have {
				list = append(list, h)
			}
			sort.Strings(list)
			if extra != "" {
				list = append(list, extra)
			}
			return fmt.Errorf("unknown %s %q; known: %s", what, g, strings.Join(list, ", "))
		}
	}
	return nil
}
