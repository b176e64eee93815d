package collab

// Every record of this module (here and in the runner and webhook packages)
// is a plain struct with a field
//
//	Extra map[string]json.RawMessage `json:"-"`
//
// that holds, verbatim, the keys the record's type does not know and the
// values that did not fit their fields, so that nothing the server sent is
// lost. Its JSON methods are generated:

//go:generate go run ./internal/cmd/genrecords
