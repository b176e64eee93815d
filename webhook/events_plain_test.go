package webhook

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep/jsonkeeptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recordCase is one event or record type of this package: a body as the
// servers send it, and the value it decodes to, built in code from exported
// fields.
type recordCase struct {
	name string // the type's name
	body string
	want any // a pointer to the value
}

// recordCases has a case for every event and record type of this package;
// TestEveryRecordHasACase fails when one is missing.
var recordCases = []recordCase{
	{"BuildEvent", `{"object_kind": "build", "ref": "gitlab-script-trigger", "tag": false, "before_sha": "2293ada6b400935a1378653304eaf6221e0fdb8f", "sha": "2293ada6b400935a1378653304eaf6221e0fdb8f", "build_id": 1977, "build_name": "test", "build_stage": "test", "build_status": "created", "build_started_at": null, "build_finished_at": null, "build_duration": null, "build_allow_failure": false, "project_id": 380, "project_name": "gitlab-org/gitlab-test", "user": {"id": 3, "name": "User", "email": "user@gitlab.com"}, "commit": {"id": 2366, "sha": "2293ada6b400935a1378653304eaf6221e0fdb8f", "message": "test\n", "author_name": "User", "author_email": "user@gitlab.com", "status": "created", "duration": null, "started_at": null, "finished_at": null}, "repository": {"name": "gitlab_test", "git_ssh_url": "git@192.168.64.1:gitlab-org/gitlab-test.git", "description": "Atque in sunt eos similique dolores voluptatem.", "homepage": "http://192.168.64.1:3005/gitlab-org/gitlab-test", "git_http_url": "http://192.168.64.1:3005/gitlab-org/gitlab-test.git", "visibility_level": 20}}`,
		&BuildEvent{
			ObjectKind:  "build",
			Ref:         "gitlab-script-trigger",
			BeforeSHA:   "2293ada6b400935a1378653304eaf6221e0fdb8f",
			SHA:         "2293ada6b400935a1378653304eaf6221e0fdb8f",
			BuildID:     1977,
			BuildName:   "test",
			BuildStage:  "test",
			BuildStatus: collab.BuildStatus("created"),
			ProjectID:   380,
			ProjectName: "gitlab-org/gitlab-test",
			User:        &BuildEventUser{ID: collab.Ptr(3), Name: collab.Ptr("User"), Email: collab.Ptr("user@gitlab.com")},
			Pipeline: &Pipeline{
				ID:          2366,
				SHA:         "2293ada6b400935a1378653304eaf6221e0fdb8f",
				Message:     collab.Ptr("test\n"),
				AuthorName:  collab.Ptr("User"),
				AuthorEmail: collab.Ptr("user@gitlab.com"),
				Status:      collab.Ptr(collab.BuildStatus("created")),
			},
			Repository: &collab.HookRepository{
				Name:            "gitlab_test",
				Description:     collab.Ptr("Atque in sunt eos similique dolores voluptatem."),
				Homepage:        "http://192.168.64.1:3005/gitlab-org/gitlab-test",
				GitHTTPURL:      "http://192.168.64.1:3005/gitlab-org/gitlab-test.git",
				GitSSHURL:       "git@192.168.64.1:gitlab-org/gitlab-test.git",
				VisibilityLevel: collab.PublicVisibility,
			},
		}},
	{"BuildEventUser", `{"id": 3, "name": "User", "email": "user@gitlab.com"}`,
		&BuildEventUser{ID: collab.Ptr(3), Name: collab.Ptr("User"), Email: collab.Ptr("user@gitlab.com")}},
	{"IssueAttributes", `{"id": 301, "iid": 23, "title": "New API: create/update/delete file", "description": "Create new API for manipulations with repository", "state": "opened", "project_id": 14, "author_id": 51, "assignee_id": 6, "milestone_id": null, "updated_by_id": null, "position": 0, "branch_name": null, "confidential": false, "due_date": "2016-07-01", "moved_to_id": null, "deleted_at": null, "created_at": "2013-12-03T17:15:43Z", "updated_at": "2013-12-03 17:15:43 UTC", "url": "http://example.com/diaspora/issues/23", "action": "open"}`,
		&IssueAttributes{
			ID:          301,
			IID:         23,
			Title:       "New API: create/update/delete file",
			Description: collab.Ptr("Create new API for manipulations with repository"),
			State:       collab.IssueOpened,
			ProjectID:   14,
			AuthorID:    51,
			AssigneeID:  collab.Ptr(6),
			DueDate:     collab.Ptr(day(2016, 7, 1)),
			CreatedAt:   collab.Ptr(at(2013, 12, 3, 17, 15, 43, 0, 0)),
			UpdatedAt:   collab.Ptr(at(2013, 12, 3, 17, 15, 43, 0, 0)),
			URL:         "http://example.com/diaspora/issues/23",
			Action:      IssueOpen,
		}},
	{"IssueEvent", `{"object_kind": "issue", "user": {"name": "Administrator", "username": "root", "avatar_url": "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=40\u0026d=identicon"}, "project": {"name": "Gitlab Test", "description": "Aut reprehenderit ut est.", "web_url": "http://example.com/gitlabhq/gitlab-test", "avatar_url": null, "git_ssh_url": "git@example.com:gitlabhq/gitlab-test.git", "git_http_url": "http://example.com/gitlabhq/gitlab-test.git", "namespace": "GitlabHQ", "visibility_level": 20, "path_with_namespace": "gitlabhq/gitlab-test", "default_branch": "master", "homepage": "http://example.com/gitlabhq/gitlab-test", "url": "http://example.com/gitlabhq/gitlab-test.git", "ssh_url": "git@example.com:gitlabhq/gitlab-test.git", "http_url": "http://example.com/gitlabhq/gitlab-test.git"}, "object_attributes": {"id": 301, "title": "New API: create/update/delete file", "assignee_id": 51, "author_id": 51, "project_id": 14, "created_at": "2013-12-03T17:15:43Z", "updated_at": "2013-12-03T17:15:43Z", "position": 0, "branch_name": null, "description": "Create new API for manipulations with repository", "milestone_id": null, "state": "opened", "iid": 23, "url": "http://example.com/diaspora/issues/23", "action": "open"}, "assignee": {"name": "User1", "username": "user1", "avatar_url": null}, "labels": [{"id": 1, "title": "bug"}]}`,
		&IssueEvent{
			ObjectKind: "issue",
			User:       &User{Name: "Administrator", Username: "root", AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=40&d=identicon")},
			Project: &collab.HookProject{
				Name:              "Gitlab Test",
				Description:       collab.Ptr("Aut reprehenderit ut est."),
				WebURL:            "http://example.com/gitlabhq/gitlab-test",
				GitSSHURL:         "git@example.com:gitlabhq/gitlab-test.git",
				GitHTTPURL:        "http://example.com/gitlabhq/gitlab-test.git",
				Namespace:         "GitlabHQ",
				VisibilityLevel:   collab.PublicVisibility,
				PathWithNamespace: "gitlabhq/gitlab-test",
				DefaultBranch:     collab.Ptr("master"),
				Homepage:          "http://example.com/gitlabhq/gitlab-test",
				URL:               "http://example.com/gitlabhq/gitlab-test.git",
				SSHURL:            "git@example.com:gitlabhq/gitlab-test.git",
				HTTPURL:           "http://example.com/gitlabhq/gitlab-test.git",
			},
			ObjectAttributes: &IssueAttributes{
				ID:          301,
				IID:         23,
				Title:       "New API: create/update/delete file",
				Description: collab.Ptr("Create new API for manipulations with repository"),
				State:       collab.IssueOpened,
				ProjectID:   14,
				AuthorID:    51,
				AssigneeID:  collab.Ptr(51),
				CreatedAt:   collab.Ptr(at(2013, 12, 3, 17, 15, 43, 0, 0)),
				UpdatedAt:   collab.Ptr(at(2013, 12, 3, 17, 15, 43, 0, 0)),
				URL:         "http://example.com/diaspora/issues/23",
				Action:      IssueOpen,
			},
			Assignee: &User{Name: "User1", Username: "user1"},
			Extra:    map[string]json.RawMessage{"labels": json.RawMessage(`[{"id":1,"title":"bug"}]`)},
		}},
	{"MergeRequestAttributes", `{"id": 99, "target_branch": "master", "source_branch": "ms-viewport", "source_project_id": 14, "author_id": 51, "assignee_id": 6, "title": "MS-Viewport", "created_at": "2013-12-03T17:23:34Z", "updated_at": "2013-12-03T17:23:34+01:00", "milestone_id": null, "state": "opened", "merge_status": "unchecked", "target_project_id": 14, "iid": 1, "description": "", "locked_at": null, "merge_params": {"force_remove_source_branch": "0"}, "merge_when_build_succeeds": false, "merge_user_id": null, "merge_commit_sha": null, "source": {"name": "Awesome Project", "namespace": "Awesome Space", "visibility_level": 20, "path_with_namespace": "awesome_space/awesome_project"}, "target": {"name": "Awesome Project", "namespace": "Awesome Space", "visibility_level": 20, "path_with_namespace": "awesome_space/awesome_project"}, "last_commit": {"id": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "message": "fixed readme", "timestamp": "2012-01-03T23:36:29+02:00", "url": "http://example.com/awesome_space/awesome_project/commits/da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "author": {"name": "GitLab dev user", "email": "gitlabdev@dv6700.(none)"}}, "work_in_progress": false, "url": "http://example.com/diaspora/merge_requests/1", "action": "open"}`,
		&MergeRequestAttributes{
			ID:              99,
			IID:             1,
			Title:           "MS-Viewport",
			Description:     collab.Ptr(""),
			State:           collab.MergeRequestOpened,
			MergeStatus:     collab.MergeStatus("unchecked"),
			SourceBranch:    "ms-viewport",
			TargetBranch:    "master",
			SourceProjectID: 14,
			TargetProjectID: 14,
			AuthorID:        51,
			AssigneeID:      collab.Ptr(6),
			MergeParams:     MergeParams{"force_remove_source_branch": "0"},
			CreatedAt:       collab.Ptr(at(2013, 12, 3, 17, 23, 34, 0, 0)),
			UpdatedAt:       collab.Ptr(at(2013, 12, 3, 17, 23, 34, 0, 3600)),
			Source:          &collab.HookProject{Name: "Awesome Project", Namespace: "Awesome Space", VisibilityLevel: collab.PublicVisibility, PathWithNamespace: "awesome_space/awesome_project"},
			Target:          &collab.HookProject{Name: "Awesome Project", Namespace: "Awesome Space", VisibilityLevel: collab.PublicVisibility, PathWithNamespace: "awesome_space/awesome_project"},
			LastCommit: &collab.PushCommit{
				ID:        "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
				Message:   "fixed readme",
				Timestamp: collab.Ptr(at(2012, 1, 3, 23, 36, 29, 0, 7200)),
				URL:       "http://example.com/awesome_space/awesome_project/commits/da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
				Author:    &collab.CommitAuthor{Name: "GitLab dev user", Email: "gitlabdev@dv6700.(none)"},
			},
			URL:    "http://example.com/diaspora/merge_requests/1",
			Action: MergeRequestOpen,
		}},
	{"MergeRequestEvent", `{"object_kind": "merge_request", "user": {"name": "Administrator", "username": "root", "avatar_url": null}, "project": {"name": "Awesome Project", "namespace": "Awesome Space", "visibility_level": 20, "path_with_namespace": "awesome_space/awesome_project"}, "repository": {"name": "Awesome Project", "url": "http://example.com/awesome_space/awesome_project.git", "description": "", "homepage": "http://example.com/awesome_space/awesome_project"}, "object_attributes": {"id": 99, "iid": 1, "title": "MS-Viewport", "state": "merged", "merge_status": "can_be_merged", "source_branch": "ms-viewport", "target_branch": "master", "action": "merge"}, "assignee": null}`,
		&MergeRequestEvent{
			ObjectKind: "merge_request",
			User:       &User{Name: "Administrator", Username: "root"},
			Project:    &collab.HookProject{Name: "Awesome Project", Namespace: "Awesome Space", VisibilityLevel: collab.PublicVisibility, PathWithNamespace: "awesome_space/awesome_project"},
			Repository: &collab.HookRepository{Name: "Awesome Project", URL: "http://example.com/awesome_space/awesome_project.git", Description: collab.Ptr(""), Homepage: "http://example.com/awesome_space/awesome_project"},
			ObjectAttributes: &MergeRequestAttributes{
				ID:           99,
				IID:          1,
				Title:        "MS-Viewport",
				State:        collab.MergeRequestMerged,
				MergeStatus:  collab.MergeStatusCanBeMerged,
				SourceBranch: "ms-viewport",
				TargetBranch: "master",
				Action:       MergeRequestMerge,
			},
		}},
	{"NoteAttributes", `{"id": 1243, "note": "This is a commit comment. How does this work?", "noteable_type": "Commit", "author_id": 1, "created_at": "2015-05-17 18:08:09 UTC", "updated_at": "2015-05-17 18:08:09 UTC", "project_id": 5, "attachment": null, "line_code": "bec9703f7a456cd2b4ab5fb3220ae016e3e394e3_0_1", "commit_id": "cfe32cf61b73a0d5e9f13e774abde7ff789b1660", "noteable_id": null, "system": false, "st_diff": {"diff": "--- /dev/null\n+++ b/six\n@@ -0,0 +1 @@\n+Subproject commit 409f37c4f05865e4fb208c771485f211a22c4c2d\n", "new_path": "six", "old_path": "six", "a_mode": "0", "b_mode": "160000", "new_file": true, "renamed_file": false, "deleted_file": false}, "url": "http://example.com/gitlab-org/gitlab-test/commit/cfe32cf61b73a0d5e9f13e774abde7ff789b1660#note_1243", "type": "DiffNote", "position": {"old_path": "six", "new_path": "six", "old_line": null, "new_line": 1, "base_sha": "a", "start_sha": "b", "head_sha": "c"}}`,
		&NoteAttributes{
			ID:           1243,
			Note:         "This is a commit comment. How does this work?",
			NoteableType: "Commit",
			CommitID:     collab.Ptr("cfe32cf61b73a0d5e9f13e774abde7ff789b1660"),
			AuthorID:     1,
			ProjectID:    5,
			LineCode:     collab.Ptr("bec9703f7a456cd2b4ab5fb3220ae016e3e394e3_0_1"),
			StDiff: &StDiff{
				Diff:    "--- /dev/null\n+++ b/six\n@@ -0,0 +1 @@\n+Subproject commit 409f37c4f05865e4fb208c771485f211a22c4c2d\n",
				NewPath: "six",
				OldPath: "six",
				AMode:   "0",
				BMode:   "160000",
				NewFile: true,
			},
			Type:      collab.Ptr("DiffNote"),
			CreatedAt: collab.Ptr(at(2015, 5, 17, 18, 8, 9, 0, 0)),
			UpdatedAt: collab.Ptr(at(2015, 5, 17, 18, 8, 9, 0, 0)),
			Position: &NotePosition{
				OldPath:  "six",
				NewPath:  "six",
				NewLine:  collab.Ptr(1),
				BaseSHA:  "a",
				StartSHA: "b",
				HeadSHA:  "c",
			},
			URL: "http://example.com/gitlab-org/gitlab-test/commit/cfe32cf61b73a0d5e9f13e774abde7ff789b1660#note_1243",
		}},
	{"NoteEvent", `{"object_kind": "note", "user": {"name": "Administrator", "username": "root", "avatar_url": null}, "project_id": 5, "project": {"name": "Gitlab Test", "namespace": "GitlabHQ", "visibility_level": 20, "path_with_namespace": "gitlabhq/gitlab-test"}, "repository": {"name": "Gitlab Test", "url": "http://example.com/gitlab-org/gitlab-test.git", "description": "Aut reprehenderit ut est.", "homepage": "http://example.com/gitlab-org/gitlab-test"}, "object_attributes": {"id": 1244, "note": "This is a snippet comment", "noteable_type": "Snippet", "author_id": 1, "created_at": "2015-05-17 18:08:09 UTC", "updated_at": "2015-05-17 18:08:09 UTC", "project_id": 5, "noteable_id": 53, "system": false, "url": "http://example.com/gitlab-org/gitlab-test/snippets/53#note_1244"}, "snippet": {"id": 53, "title": "test", "content": "puts 'Hello world'", "author_id": 1, "project_id": 5, "created_at": "2015-04-09 02:40:38 UTC", "updated_at": "2015-04-09 02:40:38 UTC", "file_name": "test.rb", "expires_at": null, "type": "ProjectSnippet", "visibility_level": 0}}`,
		&NoteEvent{
			ObjectKind: "note",
			User:       &User{Name: "Administrator", Username: "root"},
			ProjectID:  5,
			Project:    &collab.HookProject{Name: "Gitlab Test", Namespace: "GitlabHQ", VisibilityLevel: collab.PublicVisibility, PathWithNamespace: "gitlabhq/gitlab-test"},
			Repository: &collab.HookRepository{Name: "Gitlab Test", URL: "http://example.com/gitlab-org/gitlab-test.git", Description: collab.Ptr("Aut reprehenderit ut est."), Homepage: "http://example.com/gitlab-org/gitlab-test"},
			ObjectAttributes: &NoteAttributes{
				ID:           1244,
				Note:         "This is a snippet comment",
				NoteableType: "Snippet",
				NoteableID:   collab.Ptr(53),
				AuthorID:     1,
				ProjectID:    5,
				CreatedAt:    collab.Ptr(at(2015, 5, 17, 18, 8, 9, 0, 0)),
				UpdatedAt:    collab.Ptr(at(2015, 5, 17, 18, 8, 9, 0, 0)),
				URL:          "http://example.com/gitlab-org/gitlab-test/snippets/53#note_1244",
			},
			Snippet: &Snippet{
				ID:        53,
				Title:     "test",
				Content:   "puts 'Hello world'",
				FileName:  "test.rb",
				AuthorID:  1,
				ProjectID: 5,
				Type:      "ProjectSnippet",
				CreatedAt: collab.Ptr(at(2015, 4, 9, 2, 40, 38, 0, 0)),
				UpdatedAt: collab.Ptr(at(2015, 4, 9, 2, 40, 38, 0, 0)),
				Extra:     map[string]json.RawMessage{"expires_at": json.RawMessage(`null`)},
			},
		}},
	{"NotePosition", `{"old_path": "six", "new_path": "six", "old_line": null, "new_line": 1, "base_sha": "a", "start_sha": "b", "head_sha": "c"}`,
		&NotePosition{
			OldPath:  "six",
			NewPath:  "six",
			NewLine:  collab.Ptr(1),
			BaseSHA:  "a",
			StartSHA: "b",
			HeadSHA:  "c",
		}},
	{"Pipeline", `{"id": 2366, "sha": "2293ada6b400935a1378653304eaf6221e0fdb8f", "message": "test\n", "author_name": "User", "author_email": "user@gitlab.com", "status": "running", "duration": 12, "started_at": "2016-08-12 15:23:28 UTC", "finished_at": null}`,
		&Pipeline{
			ID:          2366,
			SHA:         "2293ada6b400935a1378653304eaf6221e0fdb8f",
			Message:     collab.Ptr("test\n"),
			AuthorName:  collab.Ptr("User"),
			AuthorEmail: collab.Ptr("user@gitlab.com"),
			Status:      collab.Ptr(collab.BuildRunning),
			Duration:    collab.Ptr(12),
			StartedAt:   collab.Ptr(at(2016, 8, 12, 15, 23, 28, 0, 0)),
		}},
	{"Snippet", `{"id": 53, "title": "test", "content": "puts 'Hello world'", "author_id": 1, "project_id": 5, "created_at": "2015-04-09 02:40:38 UTC", "updated_at": "2015-04-09 02:40:38 UTC", "file_name": "test.rb", "expires_at": null, "type": "ProjectSnippet", "visibility_level": 0}`,
		&Snippet{
			ID:        53,
			Title:     "test",
			Content:   "puts 'Hello world'",
			FileName:  "test.rb",
			AuthorID:  1,
			ProjectID: 5,
			Type:      "ProjectSnippet",
			CreatedAt: collab.Ptr(at(2015, 4, 9, 2, 40, 38, 0, 0)),
			UpdatedAt: collab.Ptr(at(2015, 4, 9, 2, 40, 38, 0, 0)),
			Extra:     map[string]json.RawMessage{"expires_at": json.RawMessage(`null`)},
		}},
	{"StDiff", `{"diff": "--- /dev/null\n+++ b/six\n", "new_path": "six", "old_path": "six", "a_mode": "0", "b_mode": "160000", "new_file": true, "renamed_file": false, "deleted_file": false}`,
		&StDiff{
			Diff:    "--- /dev/null\n+++ b/six\n",
			NewPath: "six",
			OldPath: "six",
			AMode:   "0",
			BMode:   "160000",
			NewFile: true,
		}},
	{"User", `{"name": "Administrator", "username": "root", "avatar_url": "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=40\u0026d=identicon"}`,
		&User{Name: "Administrator", Username: "root", AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=40&d=identicon")}},
	{"Wiki", `{"web_url": "http://example.com/root/awesome-project/wikis/home", "git_ssh_url": "git@example.com:root/awesome-project.wiki.git", "git_http_url": "http://example.com/root/awesome-project.wiki.git", "path_with_namespace": "root/awesome-project.wiki", "default_branch": "master"}`,
		&Wiki{
			WebURL:            "http://example.com/root/awesome-project/wikis/home",
			GitSSHURL:         "git@example.com:root/awesome-project.wiki.git",
			GitHTTPURL:        "http://example.com/root/awesome-project.wiki.git",
			PathWithNamespace: "root/awesome-project.wiki",
			DefaultBranch:     "master",
		}},
	{"WikiPageAttributes", `{"title": "Awesome", "content": "awesome content goes here", "format": "markdown", "message": "adding an awesome page to the wiki", "slug": "awesome", "url": "http://example.com/root/awesome-project/wikis/awesome", "action": "create"}`,
		&WikiPageAttributes{
			Title:   "Awesome",
			Slug:    "awesome",
			Format:  "markdown",
			Content: "awesome content goes here",
			Message: collab.Ptr("adding an awesome page to the wiki"),
			URL:     "http://example.com/root/awesome-project/wikis/awesome",
			Action:  WikiPageCreate,
		}},
	{"WikiPageEvent", `{"object_kind": "wiki_page", "user": {"name": "Administrator", "username": "root", "avatar_url": null}, "project": {"name": "awesome-project", "description": "This is awesome", "web_url": "http://example.com/root/awesome-project", "namespace": "root", "visibility_level": 0, "path_with_namespace": "root/awesome-project", "default_branch": "master"}, "wiki": {"web_url": "http://example.com/root/awesome-project/wikis/home", "git_ssh_url": "git@example.com:root/awesome-project.wiki.git", "git_http_url": "http://example.com/root/awesome-project.wiki.git", "path_with_namespace": "root/awesome-project.wiki", "default_branch": "master"}, "object_attributes": {"title": "Awesome", "content": "awesome content goes here", "format": "markdown", "message": "adding an awesome page to the wiki", "slug": "awesome", "url": "http://example.com/root/awesome-project/wikis/awesome", "action": "create"}}`,
		&WikiPageEvent{
			ObjectKind: "wiki_page",
			User:       &User{Name: "Administrator", Username: "root"},
			Project: &collab.HookProject{
				Name:              "awesome-project",
				Description:       collab.Ptr("This is awesome"),
				WebURL:            "http://example.com/root/awesome-project",
				Namespace:         "root",
				PathWithNamespace: "root/awesome-project",
				DefaultBranch:     collab.Ptr("master"),
			},
			Wiki: &Wiki{
				WebURL:            "http://example.com/root/awesome-project/wikis/home",
				GitSSHURL:         "git@example.com:root/awesome-project.wiki.git",
				GitHTTPURL:        "http://example.com/root/awesome-project.wiki.git",
				PathWithNamespace: "root/awesome-project.wiki",
				DefaultBranch:     "master",
			},
			ObjectAttributes: &WikiPageAttributes{
				Title:   "Awesome",
				Slug:    "awesome",
				Format:  "markdown",
				Content: "awesome content goes here",
				Message: collab.Ptr("adding an awesome page to the wiki"),
				URL:     "http://example.com/root/awesome-project/wikis/awesome",
				Action:  WikiPageCreate,
			},
		}},
	{"PushEvent", `{"object_kind": "push", "before": "95790bf891e76fee5e1747ab589903a6a1f80f22", "after": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "ref": "refs/heads/master", "checkout_sha": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "user_id": 4, "user_name": "John Smith", "user_email": "john@example.com", "user_avatar": null, "project_id": 15, "project": {"name": "Diaspora", "web_url": "http://example.com/mike/diaspora", "namespace": "Mike", "visibility_level": 0, "path_with_namespace": "mike/diaspora", "default_branch": "master"}, "commits": [{"id": "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "message": "Update Catalan translation to e38cb41.", "timestamp": "2011-12-12T14:27:31+02:00", "url": "http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "author": {"name": "Jordi Mallach", "email": "jordi@softcatala.org"}, "added": ["CHANGELOG"], "modified": ["app/controller/application.rb"], "removed": []}], "total_commits_count": 1, "repository": {"name": "Diaspora", "url": "git@example.com:mike/diaspora.git", "visibility_level": 0}}`,
		&PushEvent{PushData: collab.PushData{
			ObjectKind:  "push",
			Before:      "95790bf891e76fee5e1747ab589903a6a1f80f22",
			After:       "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
			Ref:         "refs/heads/master",
			CheckoutSHA: collab.Ptr("da1560886d4f094c3e6c9ef40349f7d38b5d27d7"),
			UserID:      4,
			UserName:    "John Smith",
			UserEmail:   "john@example.com",
			ProjectID:   15,
			Project: &collab.HookProject{
				Name:              "Diaspora",
				WebURL:            "http://example.com/mike/diaspora",
				Namespace:         "Mike",
				PathWithNamespace: "mike/diaspora",
				DefaultBranch:     collab.Ptr("master"),
			},
			Commits: []*collab.PushCommit{{
				ID:        "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
				Message:   "Update Catalan translation to e38cb41.",
				Timestamp: collab.Ptr(at(2011, 12, 12, 14, 27, 31, 0, 7200)),
				URL:       "http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
				Author:    &collab.CommitAuthor{Name: "Jordi Mallach", Email: "jordi@softcatala.org"},
				Added:     []string{"CHANGELOG"},
				Modified:  []string{"app/controller/application.rb"},
				Removed:   []string{},
			}},
			TotalCommitsCount: 1,
			Repository:        &collab.HookRepository{Name: "Diaspora", URL: "git@example.com:mike/diaspora.git"},
		}}},
	{"TagPushEvent", `{"object_kind": "tag_push", "before": "0000000000000000000000000000000000000000", "after": "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7", "ref": "refs/tags/v1.0.0", "checkout_sha": "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7", "message": "Release", "user_id": 1, "user_name": "John Smith", "user_avatar": "https://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=8://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=80", "project_id": 1, "project": {"name": "Example", "namespace": "Jsmith", "visibility_level": 0, "path_with_namespace": "jsmith/example"}, "commits": [], "total_commits_count": 0, "repository": {"name": "Example", "url": "ssh://git@example.com/jsmith/example.git", "visibility_level": 0}}`,
		&TagPushEvent{PushData: collab.PushData{
			ObjectKind:  "tag_push",
			Before:      "0000000000000000000000000000000000000000",
			After:       "82b3d5ae55f7080f1e6022629cdb57bfae7cccc7",
			Ref:         "refs/tags/v1.0.0",
			CheckoutSHA: collab.Ptr("82b3d5ae55f7080f1e6022629cdb57bfae7cccc7"),
			Message:     collab.Ptr("Release"),
			UserID:      1,
			UserName:    "John Smith",
			UserAvatar:  collab.Ptr("https://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=8://s.gravatar.com/avatar/d4c74594d841139328695756648b6bd6?s=80"),
			ProjectID:   1,
			Project:     &collab.HookProject{Name: "Example", Namespace: "Jsmith", PathWithNamespace: "jsmith/example"},
			Commits:     []*collab.PushCommit{},
			Repository:  &collab.HookRepository{Name: "Example", URL: "ssh://git@example.com/jsmith/example.git"},
		}}},
}

// at is a timestamp as decoding gives it: UTC for a zero offset, and an
// unnamed fixed zone for another.
func at(year, month, day, hour, minute, sec, nsec, offset int) collab.Time {
	loc := time.UTC
	if offset != 0 {
		loc = time.FixedZone("", offset)
	}
	return collab.Time{Time: time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)}
}

// day is a date as decoding gives it.
func day(year, month, d int) collab.Time {
	return collab.Time{Time: time.Date(year, time.Month(month), d, 0, 0, 0, 0, time.UTC), DateOnly: true}
}

// TestEventsArePlainValues: for every event and record type, a decoded body
// (through json.Unmarshal, and through ParsePayload for an event) equals the
// same value built in code under testify, cmp and reflect.DeepEqual; both
// encode to the same JSON; the encoding keeps every key and value of the
// body, and decodes to an equal value again.
func TestEventsArePlainValues(t *testing.T) {
	for _, rc := range recordCases {
		t.Run(rc.name, func(t *testing.T) { checkPlainValue(t, rc) })
	}
}

func checkPlainValue(t *testing.T, rc recordCase) {
	require.Equal(t, rc.name, reflect.TypeOf(rc.want).Elem().Name())
	_, out := jsonkeeptest.AssertPlainValue(t, rc.want, []byte(rc.body))
	assert.Empty(t, sameJSON([]byte(rc.body), out), "every key and value comes back")
	if ev, ok := rc.want.(Event); ok {
		parsed, err := ParsePayload(header(ev.Kind()), []byte(rc.body))
		require.NoError(t, err)
		jsonkeeptest.AssertSame(t, rc.want, parsed)
	}
}

// TestEveryRecordHasACase lists the events (the types ParsePayload decodes)
// and the record types of the package's source (the structs with an Extra
// field), and checks that each has a case.
func TestEveryRecordHasACase(t *testing.T) {
	var have []string
	for _, rc := range recordCases {
		have = append(have, rc.name)
	}
	for kind, dec := range decoders {
		ev, _ := dec([]byte(`{}`))
		assert.Contains(t, have, reflect.TypeOf(ev).Elem().Name(), "no case for the event of %s", kind)
	}
	jsonkeeptest.AssertEveryRecordHasACase(t, ".", have)
}
