package collab

import "github.com/collabsvc/collab/internal/jsonkeep"

//go:generate go run ./internal/cmd/genrecords

// Extras is embedded in every record of this module (here and in the
// runner and webhook packages). Its one field,
//
//	Extra map[string]json.RawMessage
//
// holds, verbatim, the keys the record's type does not know and the values
// that did not fit their fields, so that nothing the server sent is lost:
// read it as issue.Extra["key"]. Extras also remembers, in unexported
// fields, which keys a record was decoded from: encoding a decoded record
// writes back those keys, with the values it holds now, and the fields set
// since; a record built in code writes every field.
type Extras = jsonkeep.Keep
