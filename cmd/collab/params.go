package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"os"
	"strings"
)

// field is one -f or -F parameter. A key ending in "[]" appends to an array.
type field struct {
	key   string
	array bool
	value any // string, json.Number, bool or nil
}

// fieldArg is one -f or -F argument as given.
type fieldArg struct {
	kv    string
	typed bool
}

// fieldFlag is the flag.Value of -f (typed false) and -F (typed true). Both
// append to one list, so that the order between them is kept: the last of
// "-F n=1 -f n=2" wins, and "-F a[]=1 -f a[]=x" is [1, "x"].
type fieldFlag struct {
	list  *[]fieldArg
	typed bool
}

func (f fieldFlag) String() string { return "" }

func (f fieldFlag) Set(kv string) error {
	*f.list = append(*f.list, fieldArg{kv, f.typed})
	return nil
}

func (f fieldFlag) Type() string { return "stringArray" }

// parseFields reads the -f (raw string) and -F (typed) parameters, in the
// order given. stdin serves one "-F key=@-", unless inputTaken says that
// --input - reads it: a second reader would silently get nothing.
func parseFields(args []fieldArg, stdin io.Reader, inputTaken bool) ([]field, error) {
	var out []field
	stdinUsed := inputTaken
	add := func(kv string, isTyped bool) error {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" || key == "[]" {
			return usagef("parameter %q: want key=value", kv)
		}
		f := field{key: key, value: val}
		if k, isArray := strings.CutSuffix(key, "[]"); isArray {
			f.key, f.array = k, true
		}
		if isTyped {
			if val == "@-" {
				if stdinUsed {
					return usagef("-F %s: standard input is read once, by --input - or one @-", kv)
				}
				stdinUsed = true
			}
			v, err := typedValue(val, stdin)
			if err != nil {
				return err
			}
			f.value = v
		}
		out = append(out, f)
		return nil
	}
	for _, a := range args {
		if err := add(a.kv, a.typed); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// typedValue reads a -F value: true, false, null, a JSON number, @file for
// the file's contents (@- for standard input), or else the string itself.
func typedValue(s string, stdin io.Reader) (any, error) {
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "null":
		return nil, nil
	}
	if name, ok := strings.CutPrefix(s, "@"); ok {
		var b []byte
		var err error
		if name == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, usagef("-F %s: %v", s, err)
		}
		return string(b), nil
	}
	if isJSONNumber(s) {
		return json.Number(s), nil
	}
	return s, nil
}

func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}

// queryValue is how a typed value reads in a query string.
func queryValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		if v {
			return "true"
		}
		return "false"
	case json.Number:
		return string(v)
	default:
		return v.(string)
	}
}

// encodeQuery adds the fields to a path's query string, arrays as key[].
func encodeQuery(path string, fields []field) string {
	if len(fields) == 0 {
		return path
	}
	q := url.Values{}
	for _, f := range fields {
		k := f.key
		if f.array {
			k += "[]"
		}
		q.Add(k, queryValue(f.value))
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + q.Encode()
}

// encodeJSON makes a JSON object of the fields; a key given more than once
// keeps its last value unless it is an array.
func encodeJSON(fields []field) ([]byte, error) {
	obj := make(map[string]any, len(fields))
	for _, f := range fields {
		if !f.array {
			obj[f.key] = f.value
			continue
		}
		arr, _ := obj[f.key].([]any)
		obj[f.key] = append(arr, f.value)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
