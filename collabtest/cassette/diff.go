package cassette

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/wire"
)

// A Difference is one place where an answer, or a request, is not what the
// cassette recorded.
type Difference struct {
	Exchange int    // the exchange's index in the cassette
	Route    string // the exchange's route
	// Part names what differs: "status", "header Link", "body /0/title"
	// (a JSON pointer), "query key \"state\"", "path" or "method".
	Part     string
	Recorded string // the recorded value, "(missing)" when there was none
	Got      string // the value seen, "(missing)" when there was none
}

// String reads "#3 GET /api/v3/user: body /name: recorded "a", got "b"".
func (d Difference) String() string {
	return fmt.Sprintf("#%d %s: %s: recorded %s, got %s", d.Exchange, d.Route, d.Part, d.Recorded, d.Got)
}

// missing stands for a value that one side does not have.
const missing = "(missing)"

// differ compares decoded JSON values. Strict, it is for matching requests:
// values equal, except that secret keys and placeholders match anything.
// Loose, it is for comparing answers of two servers by the rules documented
// on Conform.
type differ struct {
	loose bool
	subst func(string) string // puts learned secrets in place of placeholders
	found []Difference
}

func (d *differ) add(part string, recorded, got any) {
	d.found = append(d.found, Difference{Part: part, Recorded: show(recorded), Got: show(got)})
}

// show prints a value for a message: as JSON, cut short, on one line.
func show(v any) string {
	if s, ok := v.(string); ok && s == missing {
		return s
	}
	return wire.CleanText(string(encodeJSON(v)), 60)
}

// pointerToken escapes a key for a JSON pointer.
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// value compares a (recorded) and b (got) found under key at ptr.
func (d *differ) value(ptr, key string, a, b any) {
	if d.same(key, a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		d.object(ptr, am, bm)
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok {
		for i := range max(len(al), len(bl)) {
			p := fmt.Sprintf("%s/%d", ptr, i)
			switch {
			case i >= len(bl):
				d.add("body "+p, al[i], missing)
			case i >= len(al):
				d.add("body "+p, missing, bl[i])
			default:
				d.value(p, key, al[i], bl[i])
			}
		}
		return
	}
	d.add("body "+ptrOrRoot(ptr), a, b)
}

func ptrOrRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

func (d *differ) object(ptr string, a, b map[string]any) {
	for _, k := range unionKeys(a, b) {
		p := ptr + "/" + pointerToken(k)
		av, aok := a[k]
		bv, bok := b[k]
		switch {
		case !aok:
			d.add("body "+p, missing, bv)
		case !bok:
			d.add("body "+p, av, missing)
		default:
			d.value(p, k, av, bv)
		}
	}
}

// same reports whether two leaves are equal by the differ's rules.
func (d *differ) same(key string, a, b any) bool {
	as, aStr := a.(string)
	bs, bStr := b.(string)
	if isSecretKey(key) || aStr && isPlaceholder(as) || bStr && isPlaceholder(bs) {
		return !d.loose || aStr == bStr && (a == nil) == (b == nil)
	}
	if d.loose && isIDKey(key) {
		return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b)
	}
	if d.loose && aStr && bStr {
		if d.subst != nil { // a placeholder inside a string: a clone URL's token
			as = d.subst(as)
		}
		return isTime(as) && isTime(bs) || hexRun.ReplaceAllString(as, "<hex>") == hexRun.ReplaceAllString(bs, "<hex>")
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return a == b
}

// isIDKey reports whether key names an id that a server assigns.
func isIDKey(key string) bool {
	return key == "id" || key == "iid" || strings.HasSuffix(key, "_id") || strings.HasSuffix(key, "_ids") ||
		key == "sha" || strings.HasSuffix(key, "_sha")
}

// hexRun is a run of hex digits long enough to be made up by the server:
// a commit, a file's upload directory.
var hexRun = regexp.MustCompile(`[0-9a-f]{16,}`)

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err == nil
}
