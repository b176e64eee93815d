package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/collabsvc/collab"
)

// sameJSON compares a payload with its re-encoding and returns the
// differences. Every key must come back, at every level; a known key may be
// added (every field is written). Values must be
// equal, with three canonical forms allowed: a time may be written in
// another layout if it is the same instant; a number sent as a string comes
// back as that number; an empty
// string sent for a nullable number comes back as null (for another field it
// is kept verbatim); a bool sent as a string
// comes back as that bool.
func sameJSON(in, out []byte) []string {
	a, errA := decodeAny(in)
	b, errB := decodeAny(out)
	if errA != nil || errB != nil {
		return []string{fmt.Sprintf("not JSON: %v %v", errA, errB)}
	}
	var diffs []string
	compare("$", a, b, &diffs)
	return diffs
}

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func compare(path string, a, b any, diffs *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: object became %v", path, b))
			return
		}
		for k := range av {
			if _, ok := bv[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: key lost", path, k))
			}
		}
		keys := make([]string, 0, len(bv))
		for k := range bv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := av[k]; !ok {
				continue // a known field the payload did not carry
			}
			compare(path+"."+k, av[k], bv[k], diffs)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*diffs = append(*diffs, fmt.Sprintf("%s: array became %v", path, b))
			return
		}
		for i := range av {
			compare(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], diffs)
		}
	default:
		if !sameScalar(a, b) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %#v became %#v", path, a, b))
		}
	}
}

func sameScalar(a, b any) bool {
	if a == b {
		return true
	}
	as, aIsString := a.(string)
	bs, bIsString := b.(string)
	an, aIsNumber := a.(json.Number)
	bn, bIsNumber := b.(json.Number)
	switch {
	case aIsString && bIsString:
		ta, errA := collab.ParseTime(as)
		tb, errB := collab.ParseTime(bs)
		return errA == nil && errB == nil && ta.Equal(tb.Time)
	case aIsString && b == nil:
		return strings.TrimSpace(as) == ""
	case aIsString && bIsNumber:
		return strings.TrimSpace(as) == bn.String()
	case aIsNumber && bIsString:
		return an.String() == bs
	case aIsNumber && bIsNumber:
		fa, errA := an.Float64()
		fb, errB := bn.Float64()
		return errA == nil && errB == nil && fa == fb
	case aIsString:
		bb, ok := b.(bool)
		return ok && strings.EqualFold(strings.TrimSpace(as), strconv.FormatBool(bb))
	}
	return false
}
