package wire

import (
	"strings"
	"sync"
)

// routeTemplates caches the template of each route format: formats are
// constants of the SDK, so the cache holds a few dozen entries.
var routeTemplates sync.Map // format string -> template string

// Template turns the format a method passes to Route into the route's
// template, as the API documents it: "projects/%s/issues/%s/notes" gives
// "/projects/:id/issues/:issue_id/notes". Only the format is read, never a
// value, so a template holds no id, path, name or token. The template is
// kept, so that MatchTemplate can name a request built by hand on it.
func Template(format string) string {
	if t, ok := routeTemplates.Load(format); ok {
		return t.(string)
	}
	t := buildTemplate(format)
	routeTemplates.Store(format, t)
	return t
}

func buildTemplate(format string) string {
	segs := strings.Split(strings.Trim(format, "/"), "/")
	first := true
	for i, s := range segs {
		if !strings.Contains(s, "%s") {
			continue
		}
		prev := ""
		if i > 0 {
			prev = segs[i-1]
		}
		segs[i] = strings.ReplaceAll(s, "%s", ":"+paramName(prev, first))
		first = false
	}
	return "/" + strings.Join(segs, "/")
}

// irregularParams names the value after a segment whose name is not the
// segment's singular followed by "_id".
var irregularParams = map[string]string{
	"":            "prefix", // a configured first segment, such as the job-queue path
	"user":        "user_id",
	"search":      "query",
	"members":     "user_id",
	"branches":    "branch",
	"commits":     "sha",
	"award_emoji": "award_id",
	"fork":        "forked_from_id",
}

// paramName names a placeholder after the segment before it. The first
// value of a route is the resource's own ":id" (a project or a group),
// unless that segment says what it is, as "user" or "search" do.
func paramName(prev string, first bool) string {
	if name, ok := irregularParams[prev]; ok && (!first || prev == "" || prev == "user" || prev == "search") {
		return name
	}
	if first {
		return "id"
	}
	return strings.TrimSuffix(prev, "s") + "_id"
}

// Fixed registers path, a route without values, as its own template, and
// returns it, so that a request sent on it is named like any other.
func Fixed(path string) string {
	Template(path)
	return path
}

// MatchTemplate returns the registered template that the path segments
// segs fit, literal segments equal and one segment for each value; the
// template with the most literal segments wins, and none fits is "".
func MatchTemplate(segs []string) string {
	best, bestLiterals := "", -1
	routeTemplates.Range(func(_, v any) bool {
		tmpl := v.(string)
		if n, ok := templateMatches(tmpl, segs); ok && n > bestLiterals {
			best, bestLiterals = tmpl, n
		}
		return true
	})
	return best
}

// templateMatches reports whether the path segments segs fit tmpl, and how
// many of its segments are literal.
func templateMatches(tmpl string, segs []string) (int, bool) {
	parts := strings.Split(tmpl[1:], "/")
	if len(parts) != len(segs) {
		return 0, false
	}
	literals := 0
	for i, p := range parts {
		switch {
		case strings.HasPrefix(p, ":"):
			if segs[i] == "" {
				return 0, false
			}
		case p == segs[i]:
			literals++
		default:
			return 0, false
		}
	}
	return literals, true
}
