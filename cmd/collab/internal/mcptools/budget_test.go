package mcptools

import (
	"encoding/json"
	"testing"
)

// toolsBudget is the most bytes the default tools may take in a tools/list
// answer: 6,000 tokens at 4 bytes of JSON a token. The o200k_base and
// cl100k_base tokenizers counted these tools at 4.2 and 4.5 bytes a token
// when this was set, so the budget holds under either (see docs/mcp.md).
const toolsBudget = 24_000

// toolsBytes is the size of the tools of a tools/list answer, as JSON, and
// their count.
func toolsBytes(t *testing.T, sel Selection) (int, int) {
	t.Helper()
	tools := newWorld(t, sel, nil).tools()
	raw, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	return len(raw), len(tools)
}

func TestContextBudget(t *testing.T) {
	n, k := toolsBytes(t, Selection{})
	all, ka := toolsBytes(t, Selection{Toolsets: []string{"all"}})
	ro, kr := toolsBytes(t, Selection{ReadOnly: true})
	t.Logf("default: %d tools, %d bytes; read-only default: %d tools, %d bytes; all: %d tools, %d bytes", k, n, kr, ro, ka, all)
	if n > toolsBudget {
		t.Errorf("the default tools take %d bytes of tools/list, over the budget of %d (about 6,000 tokens)", n, toolsBudget)
	}
}
