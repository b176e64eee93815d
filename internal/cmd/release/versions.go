package main

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// semverRE matches the release versions this command cuts: vMAJOR.MINOR.PATCH,
// with an optional pre-release such as -rc.1.
var semverRE = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// A version is a parsed release version.
type version struct {
	major, minor, patch int
	pre                 string
}

func parseVersion(v string) (version, error) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return version{}, fmt.Errorf("version %q is not vMAJOR.MINOR.PATCH", v)
	}
	n := func(s string) int { i, _ := strconv.Atoi(s); return i }
	return version{major: n(m[1]), minor: n(m[2]), patch: n(m[3]), pre: m[4]}, nil
}

func (v version) String() string {
	return fmt.Sprintf("v%d.%d.%d%s", v.major, v.minor, v.patch, v.pre)
}

// less orders versions as semver does (a pre-release before its release;
// pre-releases of one version compared as strings, enough for -rc.N).
func (v version) less(w version) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	if v.patch != w.patch {
		return v.patch < w.patch
	}
	return v.pre != "" && (w.pre == "" || v.pre < w.pre)
}

// allowsBreaking reports whether going from old to v may break the API:
// a new major, or under v0 a new minor, as semver asks.
func (v version) allowsBreaking(old version) bool {
	if v.major != old.major {
		return v.major > old.major
	}
	return v.major == 0 && v.minor > old.minor
}

// tagName is the tag of a module's version: vX.Y.Z at the root, dir/vX.Y.Z
// for a nested module.
func tagName(m module, v string) string {
	if m.Dir == "." {
		return v
	}
	return path.Join(m.Dir, v)
}

// setVersions returns a go.mod or go.work with every require and every
// versioned replace of a path in mods set to v, and whether it changed.
func setVersions(text []byte, mods []module, v string) ([]byte, bool) {
	paths := map[string]bool{}
	for _, m := range mods {
		paths[m.Path] = true
	}
	ls := strings.SplitAfter(string(text), "\n")
	changed := false
	for i, line := range ls {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "require" || f[0] == "replace") {
			f = f[1:]
		}
		if len(f) < 2 || !paths[f[0]] || !strings.HasPrefix(f[1], "v") || f[1] == v {
			continue
		}
		at := strings.Index(line, f[0]) + len(f[0])
		ls[i] = line[:at] + strings.Replace(line[at:], f[1], v, 1)
		changed = true
	}
	return []byte(strings.Join(ls, "")), changed
}

// hasReplace reports whether a go.mod holds a replace directive.
func hasReplace(gomod []byte) bool {
	for _, line := range lines(gomod) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			return true
		}
	}
	return false
}
