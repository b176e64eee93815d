package mcptools

import (
	"encoding/json"
	"testing"
)

// toolsBytes is the size of the tools/list answer's tools, as JSON.
func toolsBytes(t *testing.T, sel Selection) (int, int) {
	w := newWorld(t, sel, nil)
	tools := w.tools()
	raw, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw), len(tools)
}

func TestContextBudget(t *testing.T) {
	n, k := toolsBytes(t, Selection{})
	all, ka := toolsBytes(t, Selection{Toolsets: []string{"all"}})
	t.Logf("default: %d tools, %d bytes; all: %d tools, %d bytes", k, n, ka, all)
}
