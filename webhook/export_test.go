package webhook

import "reflect"

// For the tests of package webhook_test.
var SameJSON = sameJSON

// ExtraKeys returns the path of every key of v that found no field.
func ExtraKeys(v any) map[string]bool {
	out := map[string]bool{}
	collectExtra(reflect.ValueOf(v), "$", out)
	return out
}
