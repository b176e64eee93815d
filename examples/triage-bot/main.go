// Command triage-bot labels unlabelled open issues from keywords in their
// titles, leaves a note saying why, and awards an emoji. It runs against the
// embedded fake server, seeded with a few issues, unless COLLAB_URL,
// COLLAB_TOKEN and COLLAB_PROJECT are set.
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/exampleenv"
)

// rules map title keywords to the label they earn, first match wins.
var rules = []struct{ keyword, label, color string }{
	{"crash", "bug", "#d9534f"},
	{"error", "bug", "#d9534f"},
	{"slow", "performance", "#f0ad4e"},
	{"docs", "documentation", "#5bc0de"},
	{"add", "feature", "#5cb85c"},
}

func main() { exampleenv.Main("triage-bot", run) }

func run(ctx context.Context) error {
	env, err := exampleenv.OpenProject(func(srv *collabtest.Server) int {
		p := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
		for _, title := range []string{"Crash when the cart is empty", "Checkout is slow", "Add dark mode", "Typo on the about page"} {
			srv.Seed.Issue(p, srv.Admin, title)
		}
		srv.Seed.Issue(p, srv.Admin, "Error page shows a stack trace", srv.Seed.Label(p, "bug", "#d9534f"))
		return p.ID
	})
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := collab.NewClient(env.URL, collab.WithPrivateToken(env.Token))
	if err != nil {
		return err
	}
	pid := env.Project // a numeric id, or a "namespace/name" path

	t := triager{ctx: ctx, c: c, pid: pid, existing: map[string]bool{}}
	labels, _, err := c.Labels.List(ctx, pid, nil)
	if err != nil {
		return fmt.Errorf("listing labels: %w", err)
	}
	for _, l := range labels {
		t.existing[l.Name] = true
	}

	triaged, skipped := 0, 0
	for issue, err := range c.Issues.All(ctx, pid, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened)}) {
		if err != nil {
			return fmt.Errorf("listing issues: %w", err)
		}
		if len(issue.Labels) > 0 {
			skipped++
			continue
		}
		done, err := t.triage(issue)
		if err != nil {
			return err
		}
		if done {
			triaged++
		}
	}
	fmt.Printf("triaged %d issue(s); %d already had labels\n", triaged, skipped)
	return nil
}

// triager labels, notes and awards the issues of one project.
type triager struct {
	ctx      context.Context
	c        *collab.Client
	pid      any             // a numeric id, or a "namespace/name" path
	existing map[string]bool // the project's labels
}

// triage labels an unlabelled issue by the first rule its title matches,
// notes why and awards it; false when no rule matches.
func (t *triager) triage(issue *collab.Issue) (bool, error) {
	// #IID is the number people see; the calls below take the global ID.
	name := fmt.Sprintf("#%d (id %d)", issue.IID, issue.ID)
	rule := match(issue.Title)
	if rule == nil {
		fmt.Printf("%s %q: no keyword matched, left for a human\n", name, issue.Title)
		return false, nil
	}
	if !t.existing[rule.label] {
		if _, _, err := t.c.Labels.Create(t.ctx, t.pid, &collab.CreateLabelOptions{Name: rule.label, Color: rule.color}); err != nil {
			return false, fmt.Errorf("creating label %s: %w", rule.label, err)
		}
		t.existing[rule.label] = true
	}
	if _, _, err := t.c.Issues.Update(t.ctx, t.pid, issue.ID, &collab.UpdateIssueOptions{Labels: &collab.LabelNames{rule.label}}); err != nil {
		return false, fmt.Errorf("labelling %s: %w", name, err)
	}
	note := fmt.Sprintf("Labelled ~%s because the title mentions %q.", rule.label, rule.keyword)
	if _, _, err := t.c.Notes.CreateIssueNote(t.ctx, t.pid, issue.ID, &collab.CreateNoteOptions{Body: note}); err != nil {
		return false, fmt.Errorf("commenting on %s: %w", name, err)
	}
	if _, _, err := t.c.AwardEmoji.CreateIssueAward(t.ctx, t.pid, issue.ID, "eyes"); err != nil {
		return false, fmt.Errorf("awarding %s: %w", name, err)
	}
	fmt.Printf("%s %q: labelled %s, noted, awarded :eyes:\n", name, issue.Title, rule.label)
	return true, nil
}

func match(title string) *struct{ keyword, label, color string } {
	lower := strings.ToLower(title)
	for i := range rules {
		if strings.Contains(lower, rules[i].keyword) {
			return &rules[i]
		}
	}
	return nil
}
