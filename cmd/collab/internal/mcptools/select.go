package mcptools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DefaultTools are the tools served when Selection.Toolsets is empty (or
// names "default"): from the toolsets issue, mr, build, label and project,
// what an agent triaging work uses, small enough for its context. A toolset
// named in Selection.Toolsets serves every tool it has.
var DefaultTools = []string{
	"issue_list", "issue_view", "issue_create", "issue_edit", "issue_close", "issue_comment",
	"mr_list", "mr_view", "mr_diff", "mr_create", "mr_comment", "mr_merge",
	"build_list", "build_view", "build_trace", "build_retry",
	"label_list",
	"project_search", "project_view",
}

// Selection says which tools are served.
type Selection struct {
	// Toolsets are the nouns served; "all" serves every toolset and
	// "default" the DefaultTools, which are served when it is empty.
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
		toolsets = []string{"default"}
	}
	all, def := slices.Contains(toolsets, "all"), slices.Contains(toolsets, "default")
	if err := known("toolset", toolsets, sets, "all", "default"); err != nil {
		return nil, err
	}
	if err := known("default tool", DefaultTools, names); err != nil {
		return nil, err
	}
	if err := known("tool", sel.Tools, names); err != nil {
		return nil, err
	}
	if err := known("tool", sel.Exclude, names); err != nil {
		return nil, err
	}
	var out []Spec
	for _, s := range specs {
		on := all || slices.Contains(toolsets, s.Toolset) || slices.Contains(sel.Tools, s.Name) ||
			(def && slices.Contains(DefaultTools, s.Name))
		if !on || slices.Contains(sel.Exclude, s.Name) || (sel.ReadOnly && s.Writes) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// known fails on the first of got that is not in have nor extra, naming
// what is.
func known(what string, got []string, have map[string]bool, extra ...string) error {
	for _, g := range got {
		if !have[g] && !slices.Contains(extra, g) {
			list := slices.Sorted(maps.Keys(have))
			return fmt.Errorf("unknown %s %q; known: %s", what, g, strings.Join(append(list, extra...), ", "))
		}
	}
	return nil
}
