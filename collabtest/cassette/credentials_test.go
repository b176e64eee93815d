package cassette_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
	"github.com/collabsvc/collab/internal/secretkeys"
	"github.com/collabsvc/collab/runner"
)

// gzipEveryOther compresses every second answer, as a server does for a
// client that asks for gzip itself, which then gets the body compressed.
type gzipEveryOther struct{ n int }

func (g *gzipEveryOther) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if g.n++; err != nil || g.n%2 == 0 {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	resp.Header.Set("Content-Encoding", "gzip")
	resp.Header.Del("Content-Length")
	resp.Body, resp.ContentLength = io.NopCloser(&buf), int64(buf.Len())
	return resp, nil
}

// TestRecorderHidesEveryCredentialOfTheRecords records a session whose
// answers carry every credential a record holds (the private token, a
// project's runners token, a runner's token, a build's token, in its field,
// its clone URL and its variables), half of them gzipped, and finds none in
// the cassette: as written, escaped, base64-encoded or compressed.
func TestRecorderHidesEveryCredentialOfTheRecords(t *testing.T) {
	ctx := context.Background()
	srv := collabtest.NewTestServer(t)
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(&gzipEveryOther{})}
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)
	rc, err := runner.NewClient(srv.URL, collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)

	me, _, err := c.Users.Current(ctx)
	require.NoError(t, err)
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "vault"})
	require.NoError(t, err)
	p, _, err = c.Projects.Get(ctx, p.ID)
	require.NoError(t, err)
	srv.AddBuild(p.ID, collabtest.BuildSpec{Name: "rspec"})
	reg, err := rc.RegisterRunner(ctx, string(p.RunnersToken), nil)
	require.NoError(t, err)
	b, err := rc.RequestBuild(ctx, string(reg.Token), nil)
	require.NoError(t, err)
	require.NotNil(t, b)

	// Every Secret field of the records, as the recorder finds them, took a
	// value in the session: a record that gains one fails here until the
	// session carries it too.
	got := map[string]collab.Secret{
		"collab.UserDetails.PrivateToken": me.PrivateToken, "collab.Project.RunnersToken": p.RunnersToken,
		"runner.Registration.Token": reg.Token, "runner.BuildInfo.Token": b.Token,
	}
	creds := []string{srv.AdminToken}
	for _, f := range secretkeys.Fields() {
		v := got[f.Record.String()+"."+f.Name]
		require.NotEmpty(t, v, "the session carries no %s.%s", f.Record, f.Name)
		creds = append(creds, string(v))
	}
	require.Contains(t, string(b.RepoURL), string(b.Token), "the clone URL holds the build token")

	var file bytes.Buffer
	_, err = rec.Cassette().WriteTo(&file)
	require.NoError(t, err)
	text := file.String()
	cas, err := cassette.Read(strings.NewReader(text))
	require.NoError(t, err)
	require.Len(t, cas.Exchanges, 5)
	for _, cred := range creds {
		for _, form := range []string{cred, url.QueryEscape(cred), url.PathEscape(cred),
			base64.StdEncoding.EncodeToString([]byte(cred)), base64.URLEncoding.EncodeToString([]byte(cred))} {
			assert.NotContains(t, text, form, "a credential in the cassette")
		}
		for _, e := range cas.Exchanges {
			for _, m := range []cassette.Message{e.Request, e.Response} {
				assert.NotContains(t, string(gunzipped(m.Body())), cred, "%s: a credential inside a body", e.Route)
			}
		}
	}
	for _, e := range cas.Exchanges {
		assert.NotEmpty(t, e.Response.JSON, "%s: the answer is kept as JSON, decompressed", e.Route)
	}
	assert.Contains(t, text, "gitlab-ci-token:<secret-", "the clone URL keeps its shape")
	assert.Contains(t, text, "@recorded.invalid/root/vault.git", "the clone URL names the recorded origin")
}

// gunzipped returns b decompressed when it is gzip, else b.
func gunzipped(b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return b
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		return b
	}
	return plain
}
