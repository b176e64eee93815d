package bench

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gitlab "gitlab.com/gitlab-org/api/client-go"
)

// A payloadCase is one 8.x webhook payload, parsed by webhook.ParsePayload
// and by gitlab-org/api/client-go's ParseWebhook, the reference.
type payloadCase struct {
	name string
	file string // in webhook/testdata/payloads, copied from the shared captures
	kind webhook.Kind
	ref  gitlab.EventType
}

var payloadCases = []payloadCase{
	{"merge_request", "gitlabce-merge_request-1.json", webhook.KindMergeRequest, gitlab.EventTypeMergeRequest},
	{"push", "gitlabce-push-1.json", webhook.KindPush, gitlab.EventTypePush},
	{"note_issue", "gitlabce-note_issue-1.json", webhook.KindNote, gitlab.EventTypeNote},
	{"note_commit", "gitlabce-note_commit-1.json", webhook.KindNote, gitlab.EventTypeNote},
}

// maxParseRatio is how many allocations ParsePayload may make for each of
// ParseWebhook's: no more than client-go.
const maxParseRatio = 1.0

// parsers returns the two ways of parsing a case's payload, ours first.
func (pc payloadCase) parsers(tb testing.TB) [2]func() error {
	body, err := os.ReadFile(filepath.Join("..", "webhook", "testdata", "payloads", pc.file))
	require.NoError(tb, err)
	header := http.Header{webhook.HeaderEvent: {string(pc.kind)}}
	return [2]func() error{
		func() error { _, err := webhook.ParsePayload(header, body); return err },
		func() error { _, err := gitlab.ParseWebhook(pc.ref, body); return err },
	}
}

// BenchmarkParsePayload parses each payload both ways, one after the other
// and then interleaved call by call, reporting our time over the
// reference's as collab/client-go-time.
func BenchmarkParsePayload(b *testing.B) {
	for _, pc := range payloadCases {
		parse := pc.parsers(b)
		for i, name := range []string{"collab", "client-go"} {
			b.Run(pc.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if err := parse[i](); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		b.Run(pc.name+"/interleaved", func(b *testing.B) {
			var took [2]time.Duration
			for n := range b.N {
				for j := range 2 {
					k := (n + j) % 2
					start := time.Now()
					if err := parse[k](); err != nil {
						b.Fatal(err)
					}
					took[k] += time.Since(start)
				}
			}
			b.ReportMetric(float64(took[0])/float64(b.N), "collab-ns/op")
			b.ReportMetric(float64(took[1])/float64(b.N), "client-go-ns/op")
			b.ReportMetric(float64(took[0])/float64(took[1]), "collab/client-go-time")
		})
	}
}

// TestParseAllocationsAgainstClientGo holds ParsePayload to maxParseRatio
// times the allocations of ParseWebhook on each payload. Allocation counts,
// unlike timings, are stable on a shared machine.
func TestParseAllocationsAgainstClientGo(t *testing.T) {
	for _, pc := range payloadCases {
		parse := pc.parsers(t)
		var allocs [2]float64
		for i := range parse {
			require.NoError(t, parse[i](), pc.name)
			allocs[i] = testing.AllocsPerRun(200, func() { _ = parse[i]() })
		}
		ratio := allocs[0] / allocs[1]
		t.Logf("%s allocs/op: collab %.0f, client-go %.0f; ratio %.2f", pc.name, allocs[0], allocs[1], ratio)
		assert.LessOrEqual(t, ratio, maxParseRatio, pc.name)
	}
}
