package webhook

import (
	"encoding/json"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventStatesAndActions: an event's states are the root package's types,
// so they compare with a record's; its actions are this package's; and a value
// a later server adds decodes as itself and encodes back unchanged.
func TestEventStatesAndActions(t *testing.T) {
	var ie IssueEvent
	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"state":"closed","action":"close"}}`), &ie))
	assert.True(t, ie.ObjectAttributes.State == collab.IssueClosed)
	assert.True(t, ie.ObjectAttributes.Action == IssueClose)
	rec := collab.Issue{State: collab.IssueClosed}
	assert.True(t, rec.State == ie.ObjectAttributes.State)

	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"state":"triaged","action":"transfer"}}`), &ie))
	assert.Equal(t, collab.IssueState("triaged"), ie.ObjectAttributes.State)
	assert.Equal(t, IssueAction("transfer"), ie.ObjectAttributes.Action)
	out, err := json.Marshal(ie.ObjectAttributes)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"state":"triaged"`)
	assert.Contains(t, string(out), `"action":"transfer"`)

	var me MergeRequestEvent
	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"state":"draft","merge_status":"checking","action":"approved"}}`), &me))
	assert.Equal(t, collab.MergeRequestState("draft"), me.ObjectAttributes.State)
	assert.Equal(t, collab.MergeStatus("checking"), me.ObjectAttributes.MergeStatus)
	assert.Equal(t, MergeRequestAction("approved"), me.ObjectAttributes.Action)
	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"state":"merged","action":"merge"}}`), &me))
	assert.True(t, me.ObjectAttributes.State == collab.MergeRequestMerged && me.ObjectAttributes.Action == MergeRequestMerge)

	var be BuildEvent
	require.NoError(t, json.Unmarshal([]byte(`{"build_status":"manual","commit":{"status":"created"}}`), &be))
	assert.Equal(t, collab.BuildStatus("manual"), be.BuildStatus)
	assert.Equal(t, collab.BuildStatus("created"), *be.Pipeline.Status)

	var we WikiPageEvent
	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"action":"delete"}}`), &we))
	assert.Equal(t, WikiPageAction("delete"), we.ObjectAttributes.Action)
	require.NoError(t, json.Unmarshal([]byte(`{"object_attributes":{"action":"create"}}`), &we))
	assert.True(t, we.ObjectAttributes.Action == WikiPageCreate)
}
