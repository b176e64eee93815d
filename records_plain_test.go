package collab

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A recordCase is one record type: a body as the servers send it, and the
// value it decodes to, built in code from exported fields.
type recordCase struct {
	name string // the type's name
	body string
	want any // a pointer to the record
}

// recordCases has a case for every record type of this package;
// TestEveryRecordHasACase fails when one is missing.
var recordCases = []recordCase{
	{"AccessInfo", `{"access_level": 40, "notification_level": 3}`,
		&AccessInfo{AccessLevel: MasterAccess, NotificationLevel: 3}},
	{"ApplicationSettings", `{"id": 1, "created_at": "2016-01-04T15:44:55.176Z", "updated_at": "2016-06-21 09:14:07 +0200", "default_projects_limit": 10, "signup_enabled": true, "signin_enabled": true, "gravatar_enabled": true, "sign_in_text": null, "after_sign_up_text": "", "home_page_url": null, "default_branch_protection": 2, "restricted_visibility_levels": [20], "max_attachment_size": 10, "session_expire_delay": 10080, "default_project_visibility": 0, "default_snippet_visibility": 0, "default_group_visibility": 0, "restricted_signup_domains": [], "user_oauth_applications": true, "after_sign_out_path": null, "container_registry_token_expire_delay": 5, "max_artifacts_size": 100, "shared_runners_enabled": true, "repository_storage": "default", "akismet_enabled": false}`,
		&ApplicationSettings{
			ID:                                1,
			CreatedAt:                         Ptr(at(2016, 1, 4, 15, 44, 55, 176000000, 0)),
			UpdatedAt:                         Ptr(at(2016, 6, 21, 9, 14, 7, 0, 7200)),
			DefaultProjectsLimit:              10,
			SignupEnabled:                     true,
			SigninEnabled:                     true,
			GravatarEnabled:                   true,
			AfterSignUpText:                   Ptr(""),
			DefaultBranchProtection:           2,
			RestrictedVisibilityLevels:        []int{20},
			MaxAttachmentSize:                 10,
			SessionExpireDelay:                10080,
			RestrictedSignupDomains:           []string{},
			UserOAuthApplications:             true,
			ContainerRegistryTokenExpireDelay: 5,
			MaxArtifactsSize:                  100,
			SharedRunnersEnabled:              true,
			RepositoryStorage:                 "default",
			Extra:                             map[string]json.RawMessage{"akismet_enabled": json.RawMessage(`false`)},
		}},
	{"ArtifactsFile", `{"filename": "artifacts.zip", "size": 1000}`,
		&ArtifactsFile{Filename: "artifacts.zip", Size: 1000}},
	{"AwardEmoji", `{"id": 4, "name": "thumbsup", "user": {"id": 26, "name": "Jane Doe", "username": "jane", "state": "active", "avatar_url": null, "web_url": "http://example.com/jane"}, "created_at": "2016-06-15T10:09:34.206Z", "updated_at": "2016-06-15T10:09:34.206Z", "awardable_id": 80, "awardable_type": "Issue"}`,
		&AwardEmoji{
			ID:   4,
			Name: "thumbsup",
			User: &User{
				ID:       26,
				Name:     "Jane Doe",
				Username: "jane",
				State:    UserActive,
				WebURL:   "http://example.com/jane",
			},
			CreatedAt:     Ptr(at(2016, 6, 15, 10, 9, 34, 206000000, 0)),
			UpdatedAt:     Ptr(at(2016, 6, 15, 10, 9, 34, 206000000, 0)),
			AwardableID:   80,
			AwardableType: "Issue",
		}},
	{"Branch", `{"name": "master", "protected": true, "developers_can_push": false, "developers_can_merge": false, "commit": {"id": "7b5c3cc8be40ee161ae89a06bba6229da1032a0c", "parents": [{"id": "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}], "tree": "46e82de44b1061621357f24c05515327f2795a95", "message": "add projects API", "author": {"name": "John Smith", "email": "john@example.com"}, "committer": {"name": "John Smith", "email": "john@example.com"}, "authored_date": "2012-06-27T05:51:39-07:00", "committed_date": "2012-06-28T03:44:20-07:00"}}`,
		&Branch{Name: "master", Protected: true, Commit: &BranchCommit{
			ID:            "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
			Parents:       []*CommitParent{{ID: "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}},
			Tree:          "46e82de44b1061621357f24c05515327f2795a95",
			Message:       "add projects API",
			Author:        &EventPerson{Name: "John Smith", Email: "john@example.com"},
			Committer:     &EventPerson{Name: "John Smith", Email: "john@example.com"},
			AuthoredDate:  Ptr(at(2012, 6, 27, 5, 51, 39, 0, -25200)),
			CommittedDate: Ptr(at(2012, 6, 28, 3, 44, 20, 0, -25200)),
		}}},
	{"BranchCommit", `{"id": "7b5c3cc8be40ee161ae89a06bba6229da1032a0c", "parent_ids": ["4ad91d3c1144c406e50c7b33bae684bd6837faf8"], "message": "add projects API", "author_name": "John Smith", "author_email": "john@example.com", "committer_name": "Jane Roe", "committer_email": "jane@example.com", "authored_date": "2012-06-27T05:51:39+00:00", "committed_date": "2012-06-28T03:44:20Z"}`,
		&BranchCommit{
			ID:             "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
			ParentIDs:      []string{"4ad91d3c1144c406e50c7b33bae684bd6837faf8"},
			Message:        "add projects API",
			AuthorName:     "John Smith",
			AuthorEmail:    "john@example.com",
			CommitterName:  "Jane Roe",
			CommitterEmail: "jane@example.com",
			AuthoredDate:   Ptr(at(2012, 6, 27, 5, 51, 39, 0, 0)),
			CommittedDate:  Ptr(at(2012, 6, 28, 3, 44, 20, 0, 0)),
		}},
	{"Build", `{"id": 8, "name": "rubocop", "stage": "test", "ref": "master", "tag": false, "status": "success", "coverage": 97.5, "created_at": "2016-01-11T10:13:33.506Z", "started_at": "2016-01-11T10:13:33.506Z", "finished_at": null, "runner": {"id": 1, "description": "shared", "active": true, "is_shared": true, "name": null}, "artifacts_file": null, "download_url": null, "commit": {"id": "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd", "short_id": "0ff3ae19", "title": "Test the CI integration.", "message": "Test the CI integration.", "author_name": "Administrator", "author_email": "admin@example.com", "created_at": "2016-01-11T10:13:32.000+01:00"}, "user": {"id": 1, "name": "Administrator", "username": "root", "state": "active", "web_url": "http://example.com/root", "created_at": "2016-01-11T10:13:33.506Z", "is_admin": true, "bio": null, "location": null, "skype": "", "linkedin": "", "twitter": "", "website_url": ""}}`,
		&Build{
			ID:        8,
			Name:      "rubocop",
			Stage:     "test",
			Ref:       "master",
			Status:    BuildSuccess,
			Coverage:  Ptr(97.5),
			CreatedAt: Ptr(at(2016, 1, 11, 10, 13, 33, 506000000, 0)),
			StartedAt: Ptr(at(2016, 1, 11, 10, 13, 33, 506000000, 0)),
			Runner:    &BuildRunner{ID: 1, Description: Ptr("shared"), Active: true, IsShared: true},
			Commit: &BuildCommit{
				ID:          "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
				ShortID:     "0ff3ae19",
				Title:       "Test the CI integration.",
				Message:     "Test the CI integration.",
				AuthorName:  "Administrator",
				AuthorEmail: "admin@example.com",
				CreatedAt:   Ptr(at(2016, 1, 11, 10, 13, 32, 0, 3600)),
			},
			User: &BuildUser{User: User{
				ID:        1,
				Name:      "Administrator",
				Username:  "root",
				State:     UserActive,
				WebURL:    "http://example.com/root",
				CreatedAt: Ptr(at(2016, 1, 11, 10, 13, 33, 506000000, 0)),
			}, UserProfile: UserProfile{IsAdmin: true}},
		}},
	{"BuildCommit", `{"id": "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd", "short_id": "0ff3ae19", "title": "Test the CI integration.", "message": "Test the CI integration.\n", "author_name": "Administrator", "author_email": "admin@example.com", "created_at": "2016-01-11T10:13:32.000+01:00"}`,
		&BuildCommit{
			ID:          "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
			ShortID:     "0ff3ae19",
			Title:       "Test the CI integration.",
			Message:     "Test the CI integration.\n",
			AuthorName:  "Administrator",
			AuthorEmail: "admin@example.com",
			CreatedAt:   Ptr(at(2016, 1, 11, 10, 13, 32, 0, 3600)),
		}},
	{"BuildRunner", `{"id": 1, "description": "shared", "active": true, "is_shared": true, "name": null}`,
		&BuildRunner{ID: 1, Description: Ptr("shared"), Active: true, IsShared: true}},
	{"BuildUser", `{"id": 1, "name": "Administrator", "username": "root", "state": "active", "avatar_url": "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon", "web_url": "http://example.com/root", "created_at": "2016-01-11T10:13:33.506Z", "is_admin": true, "bio": "Ops", "location": null, "skype": "", "linkedin": "", "twitter": "", "website_url": ""}`,
		&BuildUser{User: User{
			ID:        1,
			Name:      "Administrator",
			Username:  "root",
			State:     UserActive,
			AvatarURL: Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon"),
			WebURL:    "http://example.com/root",
			CreatedAt: Ptr(at(2016, 1, 11, 10, 13, 33, 506000000, 0)),
		}, UserProfile: UserProfile{IsAdmin: true, Bio: Ptr("Ops")}}},
	{"Change", `{"old_path": "VERSION", "new_path": "VERSION", "a_mode": "100644", "b_mode": "100644", "diff": "--- a/VERSION\n+++ b/VERSION\n@@ -1 +1 @@\n-1.9.7\n+1.9.8", "new_file": false, "renamed_file": false, "deleted_file": false}`,
		&Change{
			OldPath: "VERSION",
			NewPath: "VERSION",
			AMode:   "100644",
			BMode:   "100644",
			Diff:    "--- a/VERSION\n+++ b/VERSION\n@@ -1 +1 @@\n-1.9.7\n+1.9.8",
		}},
	{"ClosingIssue", `{"id": "PROJ-123", "title": "Title of this issue"}`,
		&ClosingIssue{ExternalID: "PROJ-123", Title: "Title of this issue"}},
	{"CommitAuthor", `{"name": "Jordi Mallach", "email": "jordi@softcatala.org"}`,
		&CommitAuthor{Name: "Jordi Mallach", Email: "jordi@softcatala.org"}},
	{"CommitParent", `{"id": "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}`,
		&CommitParent{ID: "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}},
	{"CompoundMetrics", `{"queues": {"default": {"backlog": 0, "latency": 116.013}}, "processes": [{"hostname": "gitlab.example.com", "pid": 5922, "tag": "gitlab", "started_at": "2016-06-14T10:45:07.159-05:00", "queues": ["post_receive"], "labels": [], "concurrency": 25, "busy": 0}], "jobs": {"processed": 2, "failed": 0, "enqueued": 0}}`,
		&CompoundMetrics{Queues: map[string]*QueueMetric{"default": {Latency: 116.013}}, Processes: []*JobProcess{{
			Hostname:    "gitlab.example.com",
			PID:         5922,
			Tag:         "gitlab",
			StartedAt:   Ptr(at(2016, 6, 14, 10, 45, 7, 159000000, -18000)),
			Queues:      []string{"post_receive"},
			Labels:      []string{},
			Concurrency: 25,
		}}, Jobs: &JobCounts{Processed: 2}}},
	{"DeletedLabel", `{"id": 1, "title": "bug", "color": "#d9534f", "description": "Bug reported by user", "priority": null, "project_id": 3, "template": false, "created_at": "2016-06-21T09:14:07.000Z", "updated_at": "2016-06-21T09:14:07.000Z"}`,
		&DeletedLabel{
			ID:          1,
			Title:       "bug",
			Color:       "#d9534f",
			Description: Ptr("Bug reported by user"),
			ProjectID:   3,
			CreatedAt:   Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			UpdatedAt:   Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
		}},
	{"EventPerson", `{"name": "Dmitriy Zaporozhets", "email": "dmitriy.zaporozhets@gmail.com"}`,
		&EventPerson{Name: "Dmitriy Zaporozhets", Email: "dmitriy.zaporozhets@gmail.com"}},
	{"EventNote", `{"id": 301, "body": "Comment for MR", "attachment": null, "author": {"id": 1, "username": "pipin", "email": "admin@example.com", "name": "Pip", "state": "active", "created_at": "2013-09-30T13:46:01Z"}, "created_at": "2015-02-22T14:48:44.000+01:00", "system": false, "noteable_id": 377, "noteable_type": "MergeRequest", "upvote": false, "downvote": false}`,
		&EventNote{
			ID:   301,
			Body: "Comment for MR",
			Author: &User{
				ID:        1,
				Name:      "Pip",
				Username:  "pipin",
				State:     UserActive,
				Email:     "admin@example.com",
				CreatedAt: Ptr(at(2013, 9, 30, 13, 46, 1, 0, 0)),
			},
			CreatedAt:    Ptr(at(2015, 2, 22, 14, 48, 44, 0, 3600)),
			NoteableID:   377,
			NoteableType: "MergeRequest",
		}},
	{"ForkRelation", `{"id": 1, "forked_to_project_id": 7, "forked_from_project_id": 3, "created_at": "2016-06-21T09:14:07.000Z", "updated_at": "2016-06-21T09:14:07.000Z"}`,
		&ForkRelation{
			ID:                  1,
			ForkedToProjectID:   7,
			ForkedFromProjectID: 3,
			CreatedAt:           Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			UpdatedAt:           Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
		}},
	{"ForkedFromProject", `{"id": 13083, "name": "GitLab Community Edition", "name_with_namespace": "GitLab.org / GitLab Community Edition", "path": "gitlab-ce", "path_with_namespace": "gitlab-org/gitlab-ce", "http_url_to_repo": "http://example.com/gitlab-org/gitlab-ce.git", "web_url": "http://example.com/gitlab-org/gitlab-ce"}`,
		&ForkedFromProject{
			ID:                13083,
			Name:              "GitLab Community Edition",
			NameWithNamespace: "GitLab.org / GitLab Community Edition",
			Path:              "gitlab-ce",
			PathWithNamespace: "gitlab-org/gitlab-ce",
			HTTPURLToRepo:     "http://example.com/gitlab-org/gitlab-ce.git",
			WebURL:            "http://example.com/gitlab-org/gitlab-ce",
		}},
	{"Group", `{"id": 1, "name": "Foobar Group", "path": "foo-bar", "description": "An interesting group", "visibility_level": 20, "avatar_url": null, "web_url": "http://example.com/groups/foo-bar", "owner_id": null, "created_at": "2016-06-21T09:14:07.000Z", "updated_at": "2016-06-21T09:14:07.000Z", "avatar": {"url": null}, "share_with_group_lock": false, "request_access_enabled": false, "ldap_cn": null}`,
		&Group{
			ID:              1,
			Name:            "Foobar Group",
			Path:            "foo-bar",
			Description:     Ptr("An interesting group"),
			VisibilityLevel: PublicVisibility,
			WebURL:          "http://example.com/groups/foo-bar",
			CreatedAt:       Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			UpdatedAt:       Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			Avatar:          &NamespaceAvatar{},
			Extra:           map[string]json.RawMessage{"ldap_cn": json.RawMessage(`null`)},
		}},
	{"HookProject", `{"name": "Diaspora", "description": "", "web_url": "http://example.com/mike/diaspora", "avatar_url": null, "git_ssh_url": "git@example.com:mike/diaspora.git", "git_http_url": "http://example.com/mike/diaspora.git", "namespace": "Mike", "visibility_level": 0, "path_with_namespace": "mike/diaspora", "default_branch": "master", "homepage": "http://example.com/mike/diaspora", "url": "git@example.com:mike/diaspora.git", "ssh_url": "git@example.com:mike/diaspora.git", "http_url": "http://example.com/mike/diaspora.git"}`,
		&HookProject{
			Name:              "Diaspora",
			Description:       Ptr(""),
			WebURL:            "http://example.com/mike/diaspora",
			GitSSHURL:         "git@example.com:mike/diaspora.git",
			GitHTTPURL:        "http://example.com/mike/diaspora.git",
			Namespace:         "Mike",
			PathWithNamespace: "mike/diaspora",
			DefaultBranch:     Ptr("master"),
			Homepage:          "http://example.com/mike/diaspora",
			URL:               "git@example.com:mike/diaspora.git",
			SSHURL:            "git@example.com:mike/diaspora.git",
			HTTPURL:           "http://example.com/mike/diaspora.git",
		}},
	{"HookRepository", `{"name": "Diaspora", "url": "git@example.com:mike/diaspora.git", "description": "", "homepage": "http://example.com/mike/diaspora", "git_http_url": "http://example.com/mike/diaspora.git", "git_ssh_url": "git@example.com:mike/diaspora.git", "visibility_level": 0}`,
		&HookRepository{
			Name:        "Diaspora",
			URL:         "git@example.com:mike/diaspora.git",
			Description: Ptr(""),
			Homepage:    "http://example.com/mike/diaspora",
			GitHTTPURL:  "http://example.com/mike/diaspora.git",
			GitSSHURL:   "git@example.com:mike/diaspora.git",
		}},
	{"Identity", `{"provider": "ldapmain", "extern_uid": "uid=root,ou=people"}`,
		&Identity{Provider: "ldapmain", ExternUID: "uid=root,ou=people"}},
	{"Issue", `{"id": 76, "iid": 6, "project_id": 8, "title": "Consequatur vero maxime deserunt laboriosam est voluptas dolorem.", "description": "Ratione dolores corrupti mollitia soluta quia.", "state": "opened", "created_at": "2016-01-04T15:31:51.081Z", "updated_at": "2016-01-04T16:31:51.081+01:00", "labels": ["bug"], "milestone": {"id": 1, "iid": 1, "project_id": 8, "title": "v1.0", "description": null, "state": "active", "due_date": "2016-02-01", "created_at": "2016-01-04T15:31:39.996Z", "updated_at": "2016-01-04T15:31:39.996Z"}, "assignee": null, "author": {"id": 18, "name": "Dr. Luella Kovacek", "username": "eileen.lowe", "state": "active", "avatar_url": null, "web_url": "http://example.com/eileen.lowe"}, "subscribed": false, "user_notes_count": 1, "upvotes": 4, "downvotes": 0, "due_date": null, "confidential": false}`,
		&Issue{
			ID:          76,
			IID:         6,
			ProjectID:   8,
			Title:       "Consequatur vero maxime deserunt laboriosam est voluptas dolorem.",
			Description: Ptr("Ratione dolores corrupti mollitia soluta quia."),
			State:       IssueOpened,
			CreatedAt:   Ptr(at(2016, 1, 4, 15, 31, 51, 81000000, 0)),
			UpdatedAt:   Ptr(at(2016, 1, 4, 16, 31, 51, 81000000, 3600)),
			Labels:      []string{"bug"},
			Milestone: &Milestone{
				ID:        1,
				IID:       1,
				ProjectID: 8,
				Title:     "v1.0",
				State:     MilestoneActive,
				DueDate:   Ptr(day(2016, 2, 1)),
				CreatedAt: Ptr(at(2016, 1, 4, 15, 31, 39, 996000000, 0)),
				UpdatedAt: Ptr(at(2016, 1, 4, 15, 31, 39, 996000000, 0)),
			},
			Author: &User{
				ID:       18,
				Name:     "Dr. Luella Kovacek",
				Username: "eileen.lowe",
				State:    UserActive,
				WebURL:   "http://example.com/eileen.lowe",
			},
			UserNotesCount: 1,
			Upvotes:        4,
			Extra:          map[string]json.RawMessage{"confidential": json.RawMessage(`false`)},
		}},
	{"JobCounts", `{"processed": 2, "failed": 0, "enqueued": 0}`,
		&JobCounts{Processed: 2}},
	{"JobProcess", `{"hostname": "gitlab.example.com", "pid": 5922, "tag": "gitlab", "started_at": "2016-06-14T10:45:07.159-05:00", "queues": ["post_receive", "mailers"], "labels": [], "concurrency": 25, "busy": 0}`,
		&JobProcess{
			Hostname:    "gitlab.example.com",
			PID:         5922,
			Tag:         "gitlab",
			StartedAt:   Ptr(at(2016, 6, 14, 10, 45, 7, 159000000, -18000)),
			Queues:      []string{"post_receive", "mailers"},
			Labels:      []string{},
			Concurrency: 25,
		}},
	{"JobStats", `{"jobs": {"processed": 2, "failed": 0, "enqueued": 0}}`,
		&JobStats{Jobs: &JobCounts{Processed: 2}}},
	{"Label", `{"name": "bug", "color": "#d9534f", "description": "Bug reported by user", "open_issues_count": 1, "closed_issues_count": 0, "open_merge_requests_count": 1, "subscribed": false, "priority": 10}`,
		&Label{
			Name:                   "bug",
			Color:                  "#d9534f",
			Description:            Ptr("Bug reported by user"),
			OpenIssuesCount:        1,
			OpenMergeRequestsCount: 1,
			Extra:                  map[string]json.RawMessage{"priority": json.RawMessage(`10`)},
		}},
	{"Member", `{"id": 1, "username": "raymond_smith", "email": "ray@smith.org", "name": "Raymond Smith", "state": "active", "created_at": "2012-10-22T14:13:35Z", "access_level": 30}`,
		&Member{User: User{
			ID:        1,
			Name:      "Raymond Smith",
			Username:  "raymond_smith",
			State:     UserActive,
			Email:     "ray@smith.org",
			CreatedAt: Ptr(at(2012, 10, 22, 14, 13, 35, 0, 0)),
		}, AccessLevel: DeveloperAccess}},
	{"MergeRequest", `{"id": 1, "iid": 1, "project_id": 3, "source_branch": "test1", "target_branch": "master", "source_project_id": 3, "target_project_id": 3, "title": "test1", "description": "fixed login page css paddings", "state": "merged", "created_at": "2016-06-21T09:14:07.000Z", "updated_at": "2016-06-21T09:14:07.000Z", "upvotes": 0, "downvotes": 0, "author": {"id": 1, "username": "admin", "email": "admin@example.com", "name": "Administrator", "state": "active", "created_at": "2012-04-29T08:46:00Z"}, "assignee": null, "labels": [], "milestone": null, "work_in_progress": false, "merge_when_build_succeeds": true, "merge_status": "can_be_merged", "subscribed": false, "user_notes_count": 1, "should_remove_source_branch": true, "force_remove_source_branch": false, "sha": "8888888888888888888888888888888888888888"}`,
		&MergeRequest{
			ID:              1,
			IID:             1,
			ProjectID:       3,
			SourceBranch:    "test1",
			TargetBranch:    "master",
			SourceProjectID: 3,
			TargetProjectID: 3,
			Title:           "test1",
			Description:     Ptr("fixed login page css paddings"),
			State:           MergeRequestMerged,
			CreatedAt:       Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			UpdatedAt:       Ptr(at(2016, 6, 21, 9, 14, 7, 0, 0)),
			Author: &User{
				ID:        1,
				Name:      "Administrator",
				Username:  "admin",
				State:     UserActive,
				Email:     "admin@example.com",
				CreatedAt: Ptr(at(2012, 4, 29, 8, 46, 0, 0, 0)),
			},
			Labels:                   []string{},
			MergeWhenBuildSucceeds:   true,
			MergeStatus:              MergeStatusCanBeMerged,
			UserNotesCount:           1,
			ShouldRemoveSourceBranch: Ptr(true),
			ForceRemoveSourceBranch:  Ptr(false),
			Extra:                    map[string]json.RawMessage{"sha": json.RawMessage(`"8888888888888888888888888888888888888888"`)},
		}},
	{"MergeRequestCommit", `{"id": "ed899a2f4b50b4370feeea94676502b42383c746", "short_id": "ed899a2f4b5", "title": "Replace sanitize with escape once", "author_name": "Dmitriy Zaporozhets", "author_email": "dzaporozhets@sphereconsulting.org", "created_at": "2012-09-20T11:50:22+03:00", "message": "Replace sanitize with escape once"}`,
		&MergeRequestCommit{
			ID:          "ed899a2f4b50b4370feeea94676502b42383c746",
			ShortID:     "ed899a2f4b5",
			Title:       "Replace sanitize with escape once",
			AuthorName:  "Dmitriy Zaporozhets",
			AuthorEmail: "dzaporozhets@sphereconsulting.org",
			CreatedAt:   Ptr(at(2012, 9, 20, 11, 50, 22, 0, 10800)),
			Message:     "Replace sanitize with escape once",
		}},
	{"Milestone", `{"id": 12, "iid": 3, "project_id": 16, "title": "10.0", "description": "Version", "state": "active", "due_date": "2013-11-29", "created_at": "2013-11-29T13:34:14.000+00:00", "updated_at": "2013-11-29T13:34:14.000+00:00"}`,
		&Milestone{
			ID:          12,
			IID:         3,
			ProjectID:   16,
			Title:       "10.0",
			Description: Ptr("Version"),
			State:       MilestoneActive,
			DueDate:     Ptr(day(2013, 11, 29)),
			CreatedAt:   Ptr(at(2013, 11, 29, 13, 34, 14, 0, 0)),
			UpdatedAt:   Ptr(at(2013, 11, 29, 13, 34, 14, 0, 0)),
		}},
	{"NamespaceAvatar", `{"url": "http://example.com/uploads/group/avatar/1/avatar.png"}`,
		&NamespaceAvatar{URL: Ptr("http://example.com/uploads/group/avatar/1/avatar.png")}},
	{"Note", `{"id": 302, "body": "closed", "attachment": null, "author": {"id": 1, "username": "pipin", "email": "admin@example.com", "name": "Pip", "state": "active", "created_at": "2013-09-30T13:46:01Z"}, "created_at": "2013-10-02T09:22:45Z", "updated_at": null, "system": true, "noteable_id": 377, "noteable_type": "Issue", "upvote?": false, "downvote": true}`,
		&Note{
			ID:   302,
			Body: "closed",
			Author: &User{
				ID:        1,
				Name:      "Pip",
				Username:  "pipin",
				State:     UserActive,
				Email:     "admin@example.com",
				CreatedAt: Ptr(at(2013, 9, 30, 13, 46, 1, 0, 0)),
			},
			CreatedAt:    Ptr(at(2013, 10, 2, 9, 22, 45, 0, 0)),
			System:       true,
			NoteableID:   377,
			NoteableType: "Issue",
			Downvote:     true,
		}},
	{"Permissions", `{"project_access": {"access_level": 10, "notification_level": 3}, "group_access": null}`,
		&Permissions{ProjectAccess: &AccessInfo{AccessLevel: GuestAccess, NotificationLevel: 3}}},
	{"ProcessMetrics", `{"processes": [{"hostname": "gitlab.example.com", "pid": 5922, "tag": "gitlab", "started_at": "2016-06-14T10:45:07.159-05:00", "queues": ["post_receive"], "labels": [], "concurrency": 25, "busy": 0}]}`,
		&ProcessMetrics{Processes: []*JobProcess{{
			Hostname:    "gitlab.example.com",
			PID:         5922,
			Tag:         "gitlab",
			StartedAt:   Ptr(at(2016, 6, 14, 10, 45, 7, 159000000, -18000)),
			Queues:      []string{"post_receive"},
			Labels:      []string{},
			Concurrency: 25,
		}}}},
	{"Project", `{"id": 4, "description": null, "default_branch": "master", "public": false, "visibility_level": 10, "ssh_url_to_repo": "git@example.com:diaspora/diaspora-client.git", "http_url_to_repo": "http://example.com/diaspora/diaspora-client.git", "web_url": "http://example.com/diaspora/diaspora-client", "tag_list": ["example"], "owner": {"id": 3, "name": "Diaspora", "created_at": "2013-09-30T13:46:02Z"}, "name": "Diaspora Client", "name_with_namespace": "Diaspora / Diaspora Client", "path": "diaspora-client", "path_with_namespace": "diaspora/diaspora-client", "issues_enabled": true, "open_issues_count": 1, "merge_requests_enabled": true, "builds_enabled": true, "wiki_enabled": true, "snippets_enabled": false, "container_registry_enabled": false, "created_at": "2013-09-30T13:46:02Z", "last_activity_at": "2013-09-30T13:46:02Z", "creator_id": 3, "namespace": {"created_at": "2013-09-30T13:46:02Z", "description": "", "id": 3, "name": "Diaspora", "owner_id": 1, "path": "diaspora", "updated_at": "2013-09-30T13:46:02Z"}, "archived": false, "avatar_url": "http://example.com/uploads/project/avatar/4/uploads/avatar.png", "shared_runners_enabled": true, "forks_count": 0, "star_count": 0, "runners_token": "b8547b1dc37721d05889db52fa2f02", "public_builds": true, "shared_with_groups": [{"group_id": 4, "group_name": "Twitter", "group_access_level": 30}], "permissions": {"project_access": {"access_level": 10, "notification_level": 3}, "group_access": null}}`,
		&Project{
			ID:                   4,
			Name:                 "Diaspora Client",
			Path:                 "diaspora-client",
			NameWithNamespace:    "Diaspora / Diaspora Client",
			PathWithNamespace:    "diaspora/diaspora-client",
			DefaultBranch:        "master",
			VisibilityLevel:      InternalVisibility,
			SSHURLToRepo:         "git@example.com:diaspora/diaspora-client.git",
			HTTPURLToRepo:        "http://example.com/diaspora/diaspora-client.git",
			WebURL:               "http://example.com/diaspora/diaspora-client",
			TagList:              []string{"example"},
			Owner:                &User{ID: 3, Name: "Diaspora", CreatedAt: Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0))},
			IssuesEnabled:        true,
			MergeRequestsEnabled: true,
			BuildsEnabled:        true,
			WikiEnabled:          true,
			PublicBuilds:         true,
			SharedRunnersEnabled: true,
			OpenIssuesCount:      1,
			CreatorID:            3,
			CreatedAt:            Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
			LastActivityAt:       Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
			Namespace: &ProjectNamespace{
				ID:          3,
				Name:        "Diaspora",
				Path:        "diaspora",
				Description: Ptr(""),
				OwnerID:     Ptr(1),
				CreatedAt:   Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
				UpdatedAt:   Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
			},
			Permissions:      &Permissions{ProjectAccess: &AccessInfo{AccessLevel: GuestAccess, NotificationLevel: 3}},
			AvatarURL:        Ptr("http://example.com/uploads/project/avatar/4/uploads/avatar.png"),
			RunnersToken:     Secret("b8547b1dc37721d05889db52fa2f02"),
			SharedWithGroups: []*SharedGroup{{GroupID: 4, GroupName: "Twitter", GroupAccessLevel: DeveloperAccess}},
		}},
	{"ProjectEvent", `{"title": null, "project_id": 15, "action_name": "pushed to", "target_id": null, "target_type": null, "author_id": 1, "author_username": "root", "data": {"before": "50d4420237a9de7be1304607147aec22e4a14af7", "after": "c5feabde2d8cd023215af4d2ceeb7a64839fc428", "ref": "refs/heads/master", "user_id": 1, "user_name": "Dmitriy Zaporozhets", "project_id": 15, "commits": [{"id": "c5feabde2d8cd023215af4d2ceeb7a64839fc428", "message": "Add simple search to projects in public area", "timestamp": "2013-05-13T18:18:08+00:00", "url": "http://example.com/gitlab/gitlab/commit/c5feabde2d8cd023215af4d2ceeb7a64839fc428", "author": {"name": "Dmitriy Zaporozhets", "email": "dmitriy.zaporozhets@gmail.com"}}], "total_commits_count": 1}, "target_title": null, "created_at": "2013-05-13T18:18:08+03:00"}`,
		&ProjectEvent{
			ProjectID:      15,
			ActionName:     "pushed to",
			AuthorID:       1,
			AuthorUsername: "root",
			CreatedAt:      Ptr(at(2013, 5, 13, 18, 18, 8, 0, 10800)),
			Data: &PushData{
				Before:    "50d4420237a9de7be1304607147aec22e4a14af7",
				After:     "c5feabde2d8cd023215af4d2ceeb7a64839fc428",
				Ref:       "refs/heads/master",
				UserID:    1,
				UserName:  "Dmitriy Zaporozhets",
				ProjectID: 15,
				Commits: []*PushCommit{{
					ID:        "c5feabde2d8cd023215af4d2ceeb7a64839fc428",
					Message:   "Add simple search to projects in public area",
					Timestamp: Ptr(at(2013, 5, 13, 18, 18, 8, 0, 0)),
					URL:       "http://example.com/gitlab/gitlab/commit/c5feabde2d8cd023215af4d2ceeb7a64839fc428",
					Author:    &CommitAuthor{Name: "Dmitriy Zaporozhets", Email: "dmitriy.zaporozhets@gmail.com"},
				}},
				TotalCommitsCount: 1,
			},
		}},
	{"ProjectFile", `{"alt": "dk", "url": "/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png", "is_image": true, "markdown": "![dk](/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png)"}`,
		&ProjectFile{Alt: "dk", URL: "/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png", IsImage: true, Markdown: "![dk](/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png)"}},
	{"ProjectHook", `{"id": 1, "url": "http://example.com/hook", "project_id": 3, "push_events": true, "issues_events": true, "merge_requests_events": true, "tag_push_events": true, "note_events": true, "build_events": true, "enable_ssl_verification": true, "created_at": "2012-10-12T17:04:47Z"}`,
		&ProjectHook{
			ID:                    1,
			ProjectID:             3,
			URL:                   "http://example.com/hook",
			PushEvents:            true,
			IssuesEvents:          true,
			MergeRequestsEvents:   true,
			TagPushEvents:         true,
			NoteEvents:            true,
			BuildEvents:           true,
			EnableSSLVerification: true,
			CreatedAt:             Ptr(at(2012, 10, 12, 17, 4, 47, 0, 0)),
		}},
	{"ProjectNamespace", `{"id": 3, "name": "Diaspora", "path": "diaspora", "description": "", "owner_id": 1, "created_at": "2013-09-30T13:46:02Z", "updated_at": "2013-09-30T13:46:02Z"}`,
		&ProjectNamespace{
			ID:          3,
			Name:        "Diaspora",
			Path:        "diaspora",
			Description: Ptr(""),
			OwnerID:     Ptr(1),
			CreatedAt:   Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
			UpdatedAt:   Ptr(at(2013, 9, 30, 13, 46, 2, 0, 0)),
		}},
	{"ProjectShare", `{"id": 1, "project_id": 3, "group_id": 4, "group_access": 30}`,
		&ProjectShare{ID: 1, ProjectID: 3, GroupID: 4, GroupAccess: DeveloperAccess}},
	{"PushCommit", `{"id": "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "message": "Update Catalan translation to e38cb41.", "timestamp": "2011-12-12T14:27:31+02:00", "url": "http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327", "author": {"name": "Jordi Mallach", "email": "jordi@softcatala.org"}, "added": ["CHANGELOG"], "modified": ["app/controller/application.rb"], "removed": []}`,
		&PushCommit{
			ID:        "b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
			Message:   "Update Catalan translation to e38cb41.",
			Timestamp: Ptr(at(2011, 12, 12, 14, 27, 31, 0, 7200)),
			URL:       "http://example.com/mike/diaspora/commit/b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327",
			Author:    &CommitAuthor{Name: "Jordi Mallach", Email: "jordi@softcatala.org"},
			Added:     []string{"CHANGELOG"},
			Modified:  []string{"app/controller/application.rb"},
			Removed:   []string{},
		}},
	{"PushData", `{"object_kind": "push", "before": "95790bf891e76fee5e1747ab589903a6a1f80f22", "after": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "ref": "refs/heads/master", "checkout_sha": "da1560886d4f094c3e6c9ef40349f7d38b5d27d7", "user_id": 4, "user_name": "John Smith", "user_email": "john@example.com", "user_avatar": null, "project_id": 15, "project": {"name": "Diaspora", "web_url": "http://example.com/mike/diaspora", "namespace": "Mike", "visibility_level": 0, "path_with_namespace": "mike/diaspora", "default_branch": "master"}, "commits": [], "total_commits_count": "0", "repository": {"name": "Diaspora", "url": "git@example.com:mike/diaspora.git", "visibility_level": 0}}`,
		&PushData{
			ObjectKind:  "push",
			Before:      "95790bf891e76fee5e1747ab589903a6a1f80f22",
			After:       "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
			Ref:         "refs/heads/master",
			CheckoutSHA: Ptr("da1560886d4f094c3e6c9ef40349f7d38b5d27d7"),
			UserID:      4,
			UserName:    "John Smith",
			UserEmail:   "john@example.com",
			ProjectID:   15,
			Project: &HookProject{
				Name:              "Diaspora",
				WebURL:            "http://example.com/mike/diaspora",
				Namespace:         "Mike",
				PathWithNamespace: "mike/diaspora",
				DefaultBranch:     Ptr("master"),
			},
			Commits:    []*PushCommit{},
			Repository: &HookRepository{Name: "Diaspora", URL: "git@example.com:mike/diaspora.git"},
		}},
	{"QueueMetric", `{"backlog": 0, "latency": 116.013}`,
		&QueueMetric{Latency: 116.013}},
	{"QueueMetrics", `{"queues": {"default": {"backlog": 0, "latency": 116.013}, "mailers": {"backlog": 2, "latency": 0}}}`,
		&QueueMetrics{Queues: map[string]*QueueMetric{"default": {Latency: 116.013}, "mailers": {Backlog: 2}}}},
	{"SharedGroup", `{"group_id": 4, "group_name": "Twitter", "group_access_level": 30}`,
		&SharedGroup{GroupID: 4, GroupName: "Twitter", GroupAccessLevel: DeveloperAccess}},
	{"User", `{"id": 1, "username": "john_smith", "name": "John Smith", "state": "blocked", "avatar_url": "http://localhost:3000/uploads/user/avatar/1/cd8.jpeg", "web_url": "http://localhost:3000/john_smith", "created_at": "2012-05-23T08:00:58Z"}`,
		&User{
			ID:        1,
			Name:      "John Smith",
			Username:  "john_smith",
			State:     UserBlocked,
			AvatarURL: Ptr("http://localhost:3000/uploads/user/avatar/1/cd8.jpeg"),
			WebURL:    "http://localhost:3000/john_smith",
			CreatedAt: Ptr(at(2012, 5, 23, 8, 0, 58, 0, 0)),
		}},
	{"UserDetails", `{"id": 1, "username": "john_smith", "email": "john@example.com", "name": "John Smith", "state": "active", "created_at": "2012-05-23T08:00:58Z", "bio": null, "skype": "", "linkedin": "", "twitter": "", "website_url": "", "last_sign_in_at": "2012-06-01T11:41:01Z", "confirmed_at": "2012-05-23T09:05:22Z", "theme_id": 1, "color_scheme_id": 2, "projects_limit": 100, "current_sign_in_at": "2012-06-02T06:36:55Z", "identities": [{"provider": "github", "extern_uid": "2435223452345"}], "can_create_group": true, "can_create_project": true, "two_factor_enabled": true, "external": false, "private_token": "dd34asd13as", "is_admin": false}`,
		&UserDetails{
			User: User{
				ID:        1,
				Name:      "John Smith",
				Username:  "john_smith",
				State:     UserActive,
				Email:     "john@example.com",
				CreatedAt: Ptr(at(2012, 5, 23, 8, 0, 58, 0, 0)),
			},
			LastSignInAt:     Ptr(at(2012, 6, 1, 11, 41, 1, 0, 0)),
			CurrentSignInAt:  Ptr(at(2012, 6, 2, 6, 36, 55, 0, 0)),
			ConfirmedAt:      Ptr(at(2012, 5, 23, 9, 5, 22, 0, 0)),
			ThemeID:          1,
			ColorSchemeID:    2,
			ProjectsLimit:    100,
			Identities:       []*Identity{{Provider: "github", ExternUID: "2435223452345"}},
			CanCreateGroup:   true,
			CanCreateProject: true,
			TwoFactorEnabled: true,
			PrivateToken:     Secret("dd34asd13as"),
		}},
}

// at is a timestamp as decoding gives it: UTC for a zero offset, and an
// unnamed fixed zone for another.
func at(year, month, day, hour, minute, sec, nsec, offset int) Time {
	loc := time.UTC
	if offset != 0 {
		loc = time.FixedZone("", offset)
	}
	return Time{Time: time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)}
}

// day is a date as decoding gives it.
func day(year, month, d int) Time {
	return Time{Time: time.Date(year, time.Month(month), d, 0, 0, 0, 0, time.UTC), DateOnly: true}
}

// TestRecordsArePlainValues: for every record type, a decoded body equals
// the same value built in code under testify, cmp and reflect.DeepEqual;
// both encode to the same JSON; the encoding keeps every key of the body
// with its value, and decodes to an equal value again.
func TestRecordsArePlainValues(t *testing.T) {
	for _, rc := range recordCases {
		t.Run(rc.name, func(t *testing.T) { checkPlainValue(t, rc) })
	}
}

func checkPlainValue(t *testing.T, rc recordCase) {
	typ := reflect.TypeOf(rc.want).Elem()
	require.Equal(t, rc.name, typ.Name())
	got := reflect.New(typ).Interface()
	require.NoError(t, json.Unmarshal([]byte(rc.body), got))
	assert.Equal(t, rc.want, got)
	assert.Empty(t, cmp.Diff(rc.want, got))
	assert.True(t, reflect.DeepEqual(rc.want, got), "reflect.DeepEqual")

	gotJSON, err := json.Marshal(got)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(rc.want)
	require.NoError(t, err)
	assert.Equal(t, string(wantJSON), string(gotJSON), "equal values encode the same")
	for _, diff := range keysLost(mustDecodeAny(t, []byte(rc.body)), mustDecodeAny(t, gotJSON), "$") {
		t.Error(diff)
	}
	again := reflect.New(typ).Interface()
	require.NoError(t, json.Unmarshal(gotJSON, again))
	assert.Equal(t, got, again, "the round trip")
	assert.Empty(t, cmp.Diff(got, again), "the round trip")
}

// TestEveryRecordHasACase lists the record types of the package's source:
// the structs with an Extra field, and the types defined as one.
func TestEveryRecordHasACase(t *testing.T) {
	var have []string
	for _, rc := range recordCases {
		have = append(have, rc.name)
	}
	records := recordTypeNames(t, ".")
	require.NotEmpty(t, records)
	for _, name := range records {
		assert.Contains(t, have, name, "no case for this record type")
	}
}

// recordTypeNames returns the exported types declared in the non-test files
// of the package in dir that are structs with a field
// Extra map[string]json.RawMessage, or that are defined as such a type.
func recordTypeNames(t *testing.T, dir string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.SkipObjectResolution)
	require.NoError(t, err)
	var records []string
	defined := map[string]string{} // type name -> the type it is defined as
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					return true
				}
				switch typ := ts.Type.(type) {
				case *ast.StructType:
					if slices.ContainsFunc(typ.Fields.List, isExtraField) {
						records = append(records, ts.Name.Name)
					}
				case *ast.Ident:
					defined[ts.Name.Name] = typ.Name
				}
				return true
			})
		}
	}
	for name, of := range defined {
		if slices.Contains(records, of) {
			records = append(records, name)
		}
	}
	return records
}

func isExtraField(f *ast.Field) bool {
	return len(f.Names) == 1 && f.Names[0].Name == "Extra" && types.ExprString(f.Type) == "map[string]json.RawMessage"
}
