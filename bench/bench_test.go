// Package bench measures the SDK against the floor: the same requests made
// with net/http and encoding/json alone, into structs with the records'
// fields and standard types, on one loopback server. Each benchmark also
// makes the request by hand into the SDK's own records, which shows what the
// records' types cost apart from the client. Run:
//
//	go test ./bench -run '^$' -bench . -benchmem -count 5
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const token = "bench-token-not-a-secret"

var projectJSON = `{
  "id": 3, "name": "Diaspora Project Site", "path": "diaspora-project-site",
  "name_with_namespace": "Diaspora / Diaspora Project Site", "path_with_namespace": "diaspora/diaspora-project-site",
  "description": "Community site of the Diaspora project", "default_branch": "master", "public": false, "visibility_level": 0,
  "ssh_url_to_repo": "git@example.com:diaspora/diaspora-project-site.git",
  "http_url_to_repo": "http://example.com/diaspora/diaspora-project-site.git",
  "web_url": "http://example.com/diaspora/diaspora-project-site", "tag_list": ["example", "disapora project"],
  "owner": {"id": 3, "name": "Diaspora", "created_at": "2013-09-30T13:46:02Z"},
  "issues_enabled": true, "merge_requests_enabled": true, "builds_enabled": true, "wiki_enabled": true,
  "snippets_enabled": false, "container_registry_enabled": false, "public_builds": true, "shared_runners_enabled": true,
  "archived": false, "open_issues_count": 1, "forks_count": 0, "star_count": 0, "creator_id": 3,
  "created_at": "2013-09-30T13:46:02Z", "last_activity_at": "2013-09-30T13:46:02Z",
  "namespace": {"created_at": "2013-09-30T13:46:02Z", "description": "", "id": 3, "name": "Diaspora", "owner_id": 1,
    "path": "diaspora", "updated_at": "2013-09-30T13:46:02Z"},
  "permissions": {"project_access": {"access_level": 10, "notification_level": 3},
    "group_access": {"access_level": 50, "notification_level": 3}},
  "avatar_url": "http://example.com/uploads/project/avatar/3/uploads/avatar.png",
  "runners_token": "b8547b1dc37721d05889db52fa2f02"
}`

func issueJSON(i int) string {
	return fmt.Sprintf(`{
  "id": %d, "iid": %d, "project_id": 4, "title": "Consequatur vero maxime deserunt laboriosam est voluptas dolorem.",
  "description": "Ratione dolores corrupti mollitia soluta quia.", "state": "opened",
  "created_at": "2016-01-04T15:31:51.081Z", "updated_at": "2016-01-04T15:31:51.081Z", "labels": ["bug", "critical"],
  "milestone": {"id": 1, "iid": 1, "project_id": 4, "title": "v1.0", "description": "Launch", "state": "closed",
    "due_date": "2016-02-01", "created_at": "2016-01-04T15:31:39.996Z", "updated_at": "2016-01-04T15:31:39.996Z"},
  "assignee": {"id": 1, "name": "Administrator", "username": "root", "state": "active",
    "avatar_url": "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon", "web_url": "http://example.com/root"},
  "author": {"id": 18, "name": "Dr. Luella Kovacek", "username": "eileen.lowe", "state": "active",
    "avatar_url": "http://www.gravatar.com/avatar/c7c0df31f5a2e3d2e1c2b9e4cd4d3d4c?s=80&d=identicon", "web_url": "http://example.com/eileen.lowe"},
  "subscribed": false, "user_notes_count": 1, "upvotes": 4, "downvotes": 0, "due_date": null
}`, 100+i, i)
}

// issuePage is a page of 20 issues.
func issuePage() []byte {
	page := "["
	for i := 1; i <= 20; i++ {
		if i > 1 {
			page += ","
		}
		page += issueJSON(i)
	}
	return []byte(page + "]")
}

// newServer serves one project and a 20-item issue page with the seven
// pagination headers, as deployed servers send them.
func newServer(tb testing.TB) *httptest.Server {
	project, issues := []byte(projectJSON), issuePage()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v3/projects/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(project)
	})
	mux.HandleFunc("GET /api/v3/projects/{id}/issues", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("X-Total", "60")
		h.Set("X-Total-Pages", "3")
		h.Set("X-Per-Page", "20")
		h.Set("X-Page", "1")
		h.Set("X-Next-Page", "2")
		h.Set("X-Prev-Page", "")
		h.Set("Link", `<http://`+r.Host+`/api/v3/projects/4/issues?page=2&per_page=20&state=opened>; rel="next", <http://`+r.Host+`/api/v3/projects/4/issues?page=1&per_page=20&state=opened>; rel="first", <http://`+r.Host+`/api/v3/projects/4/issues?page=3&per_page=20&state=opened>; rel="last"`)
		w.Write(issues)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32
	return t
}

func sdkClient(tb testing.TB, srv *httptest.Server) *collab.Client {
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(token), collab.WithHTTPClient(&http.Client{Transport: transport()}))
	require.NoError(tb, err)
	return c
}

// rawGet makes one request by hand and decodes it with encoding/json's
// Decoder, as the floor does.
func rawGet(ctx context.Context, hc *http.Client, url string, v any) error {
	return rawGetWith(ctx, hc, url, func(body io.Reader) error { return json.NewDecoder(body).Decode(v) })
}

// rawGetWhole reads the body whole and decodes it with json.Unmarshal,
// which costs less CPU than the Decoder for a page of records.
func rawGetWhole(ctx context.Context, hc *http.Client, url string, v any) error {
	return rawGetWith(ctx, hc, url, func(body io.Reader) error {
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		return json.Unmarshal(b, v)
	})
}

func rawGetWith(ctx context.Context, hc *http.Client, url string, decode func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("PRIVATE-TOKEN", token)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	err = decode(resp.Body)
	io.Copy(io.Discard, resp.Body)
	return err
}

// A case is one call made in several ways on the same server: through the
// SDK, by hand into the SDK's records, and by hand into the floor's standard
// types, with the Decoder and with the body read whole.
type benchCase struct {
	name   string
	sdk    func(context.Context, *collab.Client) error
	path   string
	record reflect.Type // the SDK's result: a record or a slice of record pointers
	items  int          // the length a slice result must have
}

var cases = []benchCase{
	{"Projects.Get", func(ctx context.Context, c *collab.Client) error {
		_, _, err := c.Projects.Get(ctx, 3)
		return err
	}, "/api/v3/projects/3", reflect.TypeFor[collab.Project](), 0},
	{"Issues.List", func(ctx context.Context, c *collab.Client) error {
		is, _, err := c.Issues.List(ctx, 4, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened)})
		if err == nil && len(is) != 20 {
			err = fmt.Errorf("got %d issues", len(is))
		}
		return err
	}, "/api/v3/projects/4/issues?state=opened", reflect.TypeFor[[]*collab.Issue](), 20},
}

// raw returns the hand-made call decoding into values of type t with get.
func (bc benchCase) raw(hc *http.Client, base string, t reflect.Type, get func(context.Context, *http.Client, string, any) error) func(context.Context) error {
	return func(ctx context.Context) error {
		v := reflect.New(t)
		if err := get(ctx, hc, base+bc.path, v.Interface()); err != nil {
			return err
		}
		if t.Kind() == reflect.Slice && v.Elem().Len() != bc.items {
			return fmt.Errorf("got %d items", v.Elem().Len())
		}
		return nil
	}
}

// A side is one way of making a case's call, named as its sub-benchmark.
type side struct {
	name string
	call func(context.Context) error
}

// sides are the ways of making a case's call.
func (bc benchCase) sides(tb testing.TB, srv *httptest.Server) []side {
	c := sdkClient(tb, srv)
	hc := &http.Client{Transport: transport()}
	return []side{
		{"sdk", func(ctx context.Context) error { return bc.sdk(ctx, c) }},
		{"raw-sdk-types", bc.raw(hc, srv.URL, bc.record, rawGet)},
		{"floor", bc.raw(hc, srv.URL, floorOf(bc.record), rawGet)},
		{"floor-body-whole", bc.raw(hc, srv.URL, floorOf(bc.record), rawGetWhole)},
	}
}

// runCase runs the sides one after the other on one server, then all of
// them interleaved.
func runCase(b *testing.B, bc benchCase) {
	srv := newServer(b)
	ctx := context.Background()
	sides := bc.sides(b, srv)
	for _, side := range sides {
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := side.call(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// On a shared machine the load changes between one sub-benchmark and the
	// next. Here the sides take turns call by call, in rotating order, so
	// that the load falls on all alike. Besides the time on the clock, the
	// CPU time the process spends on each call (the client, the loopback
	// server and the garbage collector) is counted: it does not grow while
	// other programs have the CPU. The ratios are the SDK's (sides[0]) to
	// each other side.
	b.Run("interleaved", func(b *testing.B) {
		wall := make([]time.Duration, len(sides))
		cpu := make([]time.Duration, len(sides))
		for i := 0; i < b.N; i++ {
			for j := range sides {
				k := (i + j) % len(sides)
				start, startCPU := time.Now(), processCPU()
				if err := sides[k].call(ctx); err != nil {
					b.Fatal(err)
				}
				cpu[k] += processCPU() - startCPU
				wall[k] += time.Since(start)
			}
		}
		for k, t := range sides {
			b.ReportMetric(float64(wall[k])/float64(b.N), t.name+"-ns/op")
			if k > 0 {
				b.ReportMetric(float64(wall[0])/float64(wall[k]), "sdk/"+t.name+"-time")
				if cpu[k] > 0 {
					b.ReportMetric(float64(cpu[0])/float64(cpu[k]), "sdk/"+t.name+"-cpu")
				}
			}
		}
	})
}

func BenchmarkProjectsGet(b *testing.B) { runCase(b, cases[0]) }

func BenchmarkIssuesList(b *testing.B) { runCase(b, cases[1]) }

// BenchmarkDecodeIssuePage decodes the page of issues from memory, with no
// network: through the SDK's client (sdk), and by hand with json.Unmarshal
// into the SDK's records (sdk-types) and into the floor's types (floor),
// each over a transport that answers from memory. What the types and the
// decoder cost without a server.
func BenchmarkDecodeIssuePage(b *testing.B) {
	hc := &http.Client{Transport: memTransport(issuePage())}
	c, err := collab.NewClient("http://memory", collab.WithPrivateToken(token), collab.WithHTTPClient(hc))
	require.NoError(b, err)
	bc := cases[1]
	for _, side := range []side{
		{"sdk", func(ctx context.Context) error { return bc.sdk(ctx, c) }},
		{"sdk-types", bc.raw(hc, "http://memory", bc.record, rawGetWhole)},
		{"floor", bc.raw(hc, "http://memory", floorOf(bc.record), rawGetWhole)},
	} {
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if err := side.call(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// memTransport answers every request with body, as JSON.
type memTransport []byte

func (body memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}, nil
}

// maxAllocRatio is how many allocations the SDK may make per call for each
// of the floor's: no more than the floor. Allocation counts, unlike timings,
// are stable on a shared machine.
const maxAllocRatio = 1.0

// TestAllocationOverhead holds the SDK to maxAllocRatio times the floor's
// allocations per call.
func TestAllocationOverhead(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	for _, bc := range cases {
		allocs := map[string]float64{}
		for _, side := range bc.sides(t, srv) {
			require.NoError(t, side.call(ctx)) // warm the connection
			allocs[side.name] = testing.AllocsPerRun(200, func() {
				if err := side.call(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
		ratio := allocs["sdk"] / allocs["floor"]
		t.Logf("%s allocs/op: sdk %.0f, raw into SDK types %.0f, floor %.0f (body read whole %.0f); sdk/floor %.3f",
			bc.name, allocs["sdk"], allocs["raw-sdk-types"], allocs["floor"], allocs["floor-body-whole"], ratio)
		assert.LessOrEqual(t, ratio, maxAllocRatio, bc.name)
	}
}
