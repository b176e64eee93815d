package collab_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

// TestFakeUnderLoad has 64 goroutines, each acting as its own user, make
// mixed calls on one shared project, then checks that every counter the
// fake keeps matches what was done and that nothing panicked.
func TestFakeUnderLoad(t *testing.T) {
	ctx := context.Background()
	admin, srv := newFakeClient(t)
	pid := srv.Seed.Project(srv.Admin, "Busy", collab.PublicVisibility).ID
	const workers = 64
	clients := make([]*collab.Client, workers)
	for i := range clients {
		clients[i] = admin.Sudo(srv.AddUser(fmt.Sprintf("user%02d", i), false).Username)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*8)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(err error) bool {
				if err != nil {
					errs <- err
				}
				return err != nil
			}
			if _, _, err := c.Projects.Star(ctx, pid); fail(err) {
				return
			}
			keep, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: fmt.Sprintf("keep %d", i), Labels: collab.LabelNames{"load"}})
			if fail(err) {
				return
			}
			drop, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: fmt.Sprintf("drop %d", i)})
			if fail(err) {
				return
			}
			if _, _, err := c.Issues.Update(ctx, pid, drop.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)}); fail(err) {
				return
			}
			if _, _, err := c.Issues.Subscribe(ctx, pid, keep.ID); err == nil {
				errs <- fmt.Errorf("author was not subscribed to %d", keep.ID)
			}
			if _, _, err := c.Projects.Get(ctx, pid); fail(err) {
				return
			}
			if i%2 == 0 {
				_, _, err := c.Projects.Unstar(ctx, pid)
				fail(err)
			}
			for _, err := range c.Issues.All(ctx, pid, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened)}) {
				if fail(err) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	p, _, err := admin.Projects.Get(ctx, pid)
	require.NoError(t, err)
	assert.Equal(t, workers/2, p.StarCount)
	assert.Equal(t, workers, p.OpenIssuesCount)
	open, resp, err := admin.Issues.List(ctx, pid, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened), Labels: collab.LabelNames{"load"}, ListOptions: collab.ListOptions{PerPage: 100}})
	require.NoError(t, err)
	assert.Len(t, open, workers)
	assert.Equal(t, workers, resp.TotalItems)
	closed, _, err := admin.Issues.List(ctx, pid, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueClosed), ListOptions: collab.ListOptions{PerPage: 100}})
	require.NoError(t, err)
	assert.Len(t, closed, workers)
	iids := map[int]bool{}
	for _, is := range append(open, closed...) {
		assert.False(t, iids[is.IID], "iid %d given twice", is.IID)
		iids[is.IID] = true
	}
	assert.Zero(t, srv.Panics())
}
