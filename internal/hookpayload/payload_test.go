package hookpayload

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTimes(t *testing.T) {
	at := time.Date(2016, 6, 21, 11, 14, 7, 500, time.FixedZone("", 2*60*60))
	for _, c := range []struct {
		v    any
		want string
	}{
		{Time(at), `"2016-06-21 09:14:07 UTC"`},
		{Time{}, `null`},
		{Date(at), `"2016-06-21"`},
		{Date(time.Date(2016, 7, 1, 23, 30, 0, 0, time.FixedZone("", -2*60*60))), `"2016-07-02"`},
		{Date{}, `null`},
		{CommitTime(at), `"2016-06-21T11:14:07+02:00"`},
		{CommitTime(at.UTC()), `"2016-06-21T09:14:07Z"`},
	} {
		if got := encode(t, c.v); got != c.want {
			t.Errorf("%T %v: got %s, want %s", c.v, c.v, got, c.want)
		}
	}
}

func TestNullables(t *testing.T) {
	if Str("") != nil || *Str("x") != "x" {
		t.Error("Str: nil for empty, else the text")
	}
	if ID(0) != nil || *ID(7) != 7 {
		t.Error("ID: nil for 0, else the id")
	}
	v := 3
	p := Ptr(v)
	v = 4
	if *p != 3 {
		t.Error("Ptr points at a copy")
	}
}

func TestEmptyListsAreArrays(t *testing.T) {
	got := encode(t, Push{})
	want := `{"object_kind":"","event_name":"","before":"","after":"","ref":"","checkout_sha":null,"message":null,` +
		`"user_id":null,"user_name":null,"user_email":null,"user_avatar":null,"project_id":0,"project":null,"commits":[],` +
		`"total_commits_count":0,"repository":null}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c := encode(t, PushedCommit{Commit: Commit{ID: "a"}, Added: []string{"f"}})
	want = `{"id":"a","message":"","timestamp":"0001-01-01T00:00:00Z","url":"","author":{"name":"","email":""},` +
		`"added":["f"],"modified":[],"removed":[]}`
	if c != want {
		t.Errorf("got  %s\nwant %s", c, want)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(encode(t, MergeRequest{})), &m); err != nil {
		t.Fatal(err)
	}
	if params, ok := m["merge_params"].(map[string]any); !ok || len(params) != 0 {
		t.Errorf("merge_params = %#v, want {}", m["merge_params"])
	}
	if _, ok := m["url"]; ok {
		t.Error("url is left out when empty, as on a note's merge request")
	}
}

func TestProjectLayouts(t *testing.T) {
	info := ProjectInfo{
		Name: "Route Planner", WebURL: "http://h/acme/route-planner", SSHURL: "git@h:acme/route-planner.git",
		HTTPURL: "http://h/acme/route-planner.git", Namespace: "Acme", PathWithNamespace: "acme/route-planner",
		VisibilityLevel: 0,
	}
	got := encode(t, info.Project())
	want := `{"name":"Route Planner","description":null,"web_url":"http://h/acme/route-planner","avatar_url":null,` +
		`"git_ssh_url":"git@h:acme/route-planner.git","git_http_url":"http://h/acme/route-planner.git","namespace":"Acme",` +
		`"visibility_level":0,"path_with_namespace":"acme/route-planner","default_branch":null,` +
		`"homepage":"http://h/acme/route-planner","url":"git@h:acme/route-planner.git",` +
		`"ssh_url":"git@h:acme/route-planner.git","http_url":"http://h/acme/route-planner.git"}`
	if got != want {
		t.Errorf("project:\ngot  %s\nwant %s", got, want)
	}
	got = encode(t, info.LongRepository())
	want = `{"name":"Route Planner","url":"git@h:acme/route-planner.git","description":null,` +
		`"homepage":"http://h/acme/route-planner","git_http_url":"http://h/acme/route-planner.git",` +
		`"git_ssh_url":"git@h:acme/route-planner.git","visibility_level":0}`
	if got != want {
		t.Errorf("long repository, private (0 is written):\ngot  %s\nwant %s", got, want)
	}
	if got, want := NoteURL(IssueURL(info.WebURL, 3), 12), "http://h/acme/route-planner/issues/3#note_12"; got != want {
		t.Errorf("NoteURL = %s, want %s", got, want)
	}
	if got, want := MergeRequestURL(info.WebURL, 4), "http://h/acme/route-planner/merge_requests/4"; got != want {
		t.Errorf("MergeRequestURL = %s, want %s", got, want)
	}
}

func TestHTMLCharactersAreEscaped(t *testing.T) {
	got := encode(t, Issue{Title: "a<b>&c\u2028"})
	if want := `"title":"a\u003cb\u003e\u0026c\u2028"`; !strings.Contains(got, want) {
		t.Errorf("got %s, want it to hold %s", got, want)
	}
}
