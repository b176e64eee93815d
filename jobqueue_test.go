package collab_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func TestJobQueueUnit(t *testing.T) {
	ctx := context.Background()
	queues := `"queues": {"default": {"backlog": 0, "latency": 0}, "mailers": {"backlog": 2, "latency": 1.5}}`
	processes := `"processes": [{"hostname": "host", "pid": 3546, "tag": "collab", "started_at": "2016-06-14T10:45:07.159-05:00",
	  "queues": ["post_receive", "mailers"], "labels": ["blue"], "concurrency": 25, "busy": 1}]`
	jobs := `"jobs": {"processed": 2, "failed": 1, "enqueued": 3}`
	wantQueues := map[string]*collab.QueueMetric{"default": {Backlog: 0, Latency: 0}, "mailers": {Backlog: 2, Latency: 1.5}}
	wantProcs := []*collab.JobProcess{{Hostname: "host", PID: 3546, Tag: "collab", StartedAt: ts("2016-06-14T10:45:07.159-05:00"),
		Queues: []string{"post_receive", "mailers"}, Labels: []string{"blue"}, Concurrency: 25, Busy: 1}}
	wantJobs := &collab.JobCounts{Processed: 2, Failed: 1, Enqueued: 3}

	for _, segment := range []string{"", "sidekiq"} {
		var opts []collab.ClientOption
		prefix := "jobqueue"
		if segment != "" {
			opts, prefix = append(opts, collab.WithJobQueuePath(segment)), segment
		}
		c, m := newMockClient(t, opts...)
		m.Reply(200, "{"+queues+"}")
		q, _, err := c.JobQueue.QueueMetrics(ctx)
		require.NoError(t, err)
		m.AssertRequest("GET", prefix+"/queue_metrics", nil)
		assert.Equal(t, wantQueues, q.Queues)
		m.Reply(200, "{"+processes+"}")
		p, _, err := c.JobQueue.ProcessMetrics(ctx)
		require.NoError(t, err)
		m.AssertRequest("GET", prefix+"/process_metrics", nil)
		assert.Equal(t, wantProcs, p.Processes)
		m.Reply(200, "{"+jobs+"}")
		j, _, err := c.JobQueue.JobStats(ctx)
		require.NoError(t, err)
		m.AssertRequest("GET", prefix+"/job_stats", nil)
		assert.Equal(t, wantJobs, j.Jobs)
		m.Reply(200, "{"+queues+","+processes+","+jobs+"}")
		all, _, err := c.JobQueue.CompoundMetrics(ctx)
		require.NoError(t, err)
		m.AssertRequest("GET", prefix+"/compound_metrics", nil)
		assert.Equal(t, &collab.CompoundMetrics{Queues: wantQueues, Processes: wantProcs, Jobs: wantJobs}, all)
		m.Reply(403, `{"message":"403 Forbidden"}`)
		_, _, err = c.JobQueue.CompoundMetrics(ctx)
		assert.ErrorIs(t, err, collab.ErrForbidden)
	}
}

func TestJobQueueAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "CI", collab.PrivateVisibility)
	srv.Seed.Build(project, collabtest.BuildSpec{})
	srv.Seed.Build(project, collabtest.BuildSpec{Status: "failed"})
	for _, client := range []*collab.Client{c, mustClient(t, srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithJobQueuePath("sidekiq"))} {
		m, _, err := client.JobQueue.CompoundMetrics(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, m.Queues["default"].Backlog)
		assert.Equal(t, &collab.JobCounts{Processed: 1, Failed: 1, Enqueued: 1}, m.Jobs)
		require.Len(t, m.Processes, 1)
		assert.NotNil(t, m.Processes[0].StartedAt)
		q, _, err := client.JobQueue.QueueMetrics(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1.5, q.Queues["pipeline"].Latency)
		p, _, err := client.JobQueue.ProcessMetrics(ctx)
		require.NoError(t, err)
		assert.Equal(t, 25, p.Processes[0].Concurrency)
		j, _, err := client.JobQueue.JobStats(ctx)
		require.NoError(t, err)
		assert.Equal(t, 1, j.Jobs.Enqueued)
	}
	alice := srv.AddUser("alice", false)
	_, _, err := clientAs(t, srv, alice.Token).JobQueue.JobStats(ctx)
	assert.ErrorIs(t, err, collab.ErrForbidden)
}

func mustClient(t *testing.T, base string, opts ...collab.ClientOption) *collab.Client {
	t.Helper()
	c, err := collab.NewClient(base, append(opts, collab.WithoutRetries(), collab.WithLogger(testLogger))...)
	require.NoError(t, err)
	return c
}
