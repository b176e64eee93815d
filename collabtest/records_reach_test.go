package collabtest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
	runnerapi "github.com/collabsvc/collab/runner"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonKeys are the keys values of t encode, with those of embedded structs,
// each with the type of its field.
func jsonKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "":
			for k, typ := range jsonKeys(f.Type) {
				keys[k] = typ
			}
		case name != "-" && f.IsExported():
			keys[cmpOr(name, f.Name)] = f.Type
		}
	}
	return keys
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// recordStruct is the struct a field of type t holds records of, if any.
func recordStruct(t reflect.Type) (reflect.Type, bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	_, isRecord := t.FieldByName("Extra")
	return t, isRecord
}

// findKeys checks that got, at path, has every key of record type t, and so
// do the records nested in it, but for the keys leftOut allows.
func findKeys(t *testing.T, where string, typ reflect.Type, path string, got map[string]any, leftOut func(path string) bool) {
	t.Helper()
	for key, ft := range jsonKeys(typ) {
		p := serverformJoin(path, key)
		v, ok := got[key]
		if !ok {
			assert.True(t, leftOut(p), "%s: %s, a key of %s, is missing", where, p, typ)
			continue
		}
		sub, nested := recordStruct(ft)
		if !nested {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			findKeys(t, where, sub, p, v, leftOut)
		case []any:
			for _, e := range v {
				if m, ok := e.(map[string]any); ok {
					findKeys(t, where, sub, p+"[]", m, leftOut)
				}
			}
		}
	}
}

func serverformJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decodeLocked builds a value with the state lock held, encodes it as
// encode does, and decodes it as a JSON object.
func decodeLocked(t *testing.T, s *Server, encode func(any) ([]byte, error), build func() any) map[string]any {
	t.Helper()
	s.mu.Lock()
	b, err := encode(build())
	s.mu.Unlock()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}

// TestRecordsReachAnswersAndPayloads: every key of each record the fake
// answers with is in its answer, and every key of each webhook event type
// is in the payload delivered, but for the keys a variant leaves out. As
// both are encoded from the records, a field added to a record is there with
// no edit of the fake.
func TestRecordsReachAnswersAndPayloads(t *testing.T) {
	s := newTestServer(t)
	dev := s.AddUser("dana", false)
	pid := s.AddProject(s.AdminID, "Route Planner", 10)
	fork := s.AddProject(dev.ID, "Route Planner fork", 10)
	gid := s.AddGroup(s.AdminID, "Tools", "tools", 10)
	s.AddBranch(pid, "fix-eta", "")
	issueID := s.AddIssue(pid, dev.ID, "ETA off", "bug")
	mrID := s.AddMergeRequest(pid, dev.ID, "fix-eta", "master", "Fix ETA")
	noteID := s.AddNote(pid, "MergeRequest", mrID, dev.ID, "LGTM")
	buildID := s.AddBuild(pid, BuildSpec{Ref: "fix-eta", UserID: dev.ID, Artifacts: []byte("zip")})
	s.mu.Lock()
	ms := &milestone{id: s.newID(), iid: 1, projectID: pid, title: "v1", state: "active", dueDate: "2016-07-01",
		createdAt: s.now(), updatedAt: s.now()}
	s.milestones[ms.id] = ms
	s.issues[issueID].assigneeID, s.issues[issueID].milestoneID, s.issues[issueID].dueDate = dev.ID, ms.id, "2016-07-01"
	s.mergeRequests[mrID].assigneeID, s.mergeRequests[mrID].milestoneID = s.AdminID, ms.id
	s.projects[fork].forkedFromID = pid
	aw := &award{id: s.newID(), name: "thumbsup", userID: dev.ID, awardableType: "Issue", awardableID: issueID,
		createdAt: s.now(), updatedAt: s.now()}
	s.awards[aw.id] = aw
	hk := &hook{id: s.newID(), projectID: pid, url: "https://hooks.example/ci", pushEvents: true, createdAt: s.now()}
	s.hooks[hk.id] = hk
	s.mu.Unlock()
	s.AddMember(pid, dev.ID, 30)
	admin := s.users[s.AdminID]

	omits := func(omit ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(omit, p) }
	}
	answers := []struct {
		name   string
		record any
		build  func() any
		omit   []string
	}{
		{"issue", collab.Issue{}, func() any { return s.issueJSON(s.issues[issueID], admin, true) }, ticketOmit},
		{"merge request", collab.MergeRequest{}, func() any { return s.mergeRequestJSON(s.mergeRequests[mrID], admin) },
			append(ticketOmit, "changes")},
		{"note", collab.Note{}, func() any { return s.noteJSON(s.notes[noteID]) }, noteOmit},
		{"milestone", collab.Milestone{}, func() any { return s.milestoneJSON(ms) }, nil},
		{"label", collab.Label{}, func() any { return s.labelJSON(s.findLabel(pid, "bug"), admin) }, nil},
		{"user", collab.User{}, func() any { return s.userJSON(dev.ID) }, briefUserOmit},
		{"account", collab.UserDetails{}, func() any { return s.account(s.users[dev.ID]) }, []string{"private_token"}},
		{"award", collab.AwardEmoji{}, func() any { return s.awardJSON(aw) }, serverform.Under("user", briefUserOmit...)},
		{"member", collab.Member{}, func() any { return s.memberJSON(s.users[dev.ID], 30, true) }, memberOmit},
		{"group", collab.Group{}, func() any { return s.groupJSON(s.groups[gid], false, admin) }, groupOmit},
		{"branch", collab.Branch{}, func() any { return s.branchJSON(s.projects[pid], s.projects[pid].branches["fix-eta"]) }, branchOmit},
		// The last event is the comment's.
		{"event", collab.ProjectEvent{}, func() any { return s.eventJSON(s.events[len(s.events)-1]) },
			append(serverform.Under("author", briefUserOmit...), serverform.Under("note", eventNoteOmit...)...)},
		{"build", collab.Build{}, func() any { return s.buildJSON(s.builds[buildID]) }, append(buildOmit, "download_url")},
		{"merge request commit", collab.MergeRequestCommit{}, func() any {
			return reply(s.mergeRequestCommitRecords(s.projects[pid], s.mergeRequests[mrID])[0])
		}, nil},
		{"settings", collab.ApplicationSettings{}, func() any {
			rec, err := s.settingsJSON()
			require.NoError(t, err)
			return rec
		}, nil},
		{"job queue metrics", collab.CompoundMetrics{}, func() any { return reply(s.jobMetricsRecord()) }, nil},
		{"uploaded file", collab.ProjectFile{}, func() any { return reply(projectFileRecord("eta.png", "/uploads/ab/eta.png")) }, nil},
		{"fork relation", collab.ForkRelation{}, func() any { return reply(s.projects[fork].forkRelationRecord()) }, nil},
		{"hook", collab.ProjectHook{}, func() any { return hookJSON(hk) }, nil},
		// The fork is a user's project, which carries no group namespace's keys.
		{"project", collab.Project{}, func() any { return s.projectJSON(s.projects[fork], s.users[dev.ID]) },
			append(serverform.Under("owner", "username", "state", "avatar_url", "web_url", "email"),
				serverform.Under("namespace", "avatar", "share_with_group_lock", "visibility_level", "request_access_enabled")...)},
	}
	for _, a := range answers {
		got := decodeLocked(t, s, json.Marshal, a.build)
		findKeys(t, a.name+" answer", reflect.TypeOf(a.record), "", got, omits(a.omit...))
	}

	// The runner API's answers are still written key by key (package runner
	// imports collabtest in its tests, so collabtest cannot import it): this
	// catches a field added to runner's records and not to the fake.
	s.mu.Lock()
	r := s.newRunner("ci")
	s.mu.Unlock()
	runnerAnswers := []struct {
		name   string
		record any
		build  func() any
		omit   []string
	}{
		{"runner build", runnerapi.Build{}, func() any { return s.registerJSON(s.builds[buildID]) },
			append(serverform.Under("options", "image", "services", "artifacts", "cache", "dependencies", "after_script"),
				"artifacts_expire_at")},
		{"runner registration", runnerapi.Registration{}, func() any { return registrationJSON(r) }, nil},
	}
	for _, a := range runnerAnswers {
		got := decodeLocked(t, s, json.Marshal, a.build)
		findKeys(t, a.name+" answer", reflect.TypeOf(a.record), "", got, omits(a.omit...))
	}

	payloads := []struct {
		kind  string
		event any
		build func() any
	}{
		{"issue", webhook.IssueEvent{}, func() any { return s.issuePayload(s.issues[issueID], dev.ID, "open") }},
		{"merge_request", webhook.MergeRequestEvent{}, func() any { return s.mergeRequestPayload(s.mergeRequests[mrID], dev.ID, "update") }},
		{"note", webhook.NoteEvent{}, func() any { return s.notePayload(s.notes[noteID]) }},
		{"build", webhook.BuildEvent{}, func() any { return s.buildPayload(s.builds[buildID]) }},
		{"push", webhook.PushEvent{}, func() any {
			commits := []pushedCommit{{PushCommit: PushCommit{Message: "m", AuthorName: "a", AuthorEmail: "a@x"},
				id: strings.Repeat("a", 40), at: s.now()}}
			return s.pushData(s.projects[pid], s.users[dev.ID], "master", serverform.ZeroSHA, commits[0].id, commits)
		}},
	}
	for _, p := range payloads {
		got := decodeLocked(t, s, serverform.Encode, p.build)
		// A note event carries one of its noteables; this one is on a merge
		// request.
		findKeys(t, p.kind+" payload", reflect.TypeOf(p.event), "", got, func(path string) bool {
			return serverform.LeftOut(p.kind, path) && (p.kind != "note" || path != "merge_request")
		})
	}
}
