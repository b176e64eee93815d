package main

import (
	"os"
	"regexp"
	"strings"
)

// versionHeading matches a CHANGELOG.md heading of a version: "## v0.1.0",
// optionally followed by a date or a note.
var versionHeading = regexp.MustCompile(`(?m)^## \[?(v[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.-]*)\]?`)

// A changelog is CHANGELOG.md's text.
type changelog string

func readChangelog(name string) (changelog, error) {
	b, err := os.ReadFile(name)
	return changelog(b), err
}

// newest returns the first version the changelog names: the one being
// released, or the last one released.
func (c changelog) newest() string {
	if m := versionHeading.FindStringSubmatch(string(c)); m != nil {
		return m[1]
	}
	return ""
}

// section returns the text of version v's entry, up to the next heading of
// the same level, or "" when there is none.
func (c changelog) section(v string) string {
	locs := versionHeading.FindAllStringSubmatchIndex(string(c), -1)
	for _, l := range locs {
		if string(c)[l[2]:l[3]] != v {
			continue
		}
		rest := string(c)[l[1]:]
		if i := strings.Index(rest, "\n## "); i >= 0 {
			rest = rest[:i]
		}
		return rest
	}
	return ""
}

// breaking returns the "Breaking changes" part of version v's entry: the
// text after a heading or a line that starts with those words, up to the next
// heading.
func (c changelog) breaking(v string) string {
	sec := c.section(v)
	loc := regexp.MustCompile(`(?mi)^(#+ *)?breaking changes.*$`).FindStringIndex(sec)
	if loc == nil {
		return ""
	}
	rest := sec[loc[1]:]
	if i := strings.Index(rest, "\n#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
