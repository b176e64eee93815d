package collab

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatesKeepUnknownValues: every closed set is a named string, so a value
// a later server adds decodes as itself and encodes back unchanged, while the
// known values compare with the constants.
func TestStatesKeepUnknownValues(t *testing.T) {
	var is Issue
	require.NoError(t, json.Unmarshal([]byte(`{"state":"triaged","milestone":{"state":"archived"},"author":{"state":"deactivated"}}`), &is))
	assert.Equal(t, IssueState("triaged"), is.State)
	assert.Equal(t, MilestoneState("archived"), is.Milestone.State)
	assert.Equal(t, UserState("deactivated"), is.Author.State)

	var mr MergeRequest
	require.NoError(t, json.Unmarshal([]byte(`{"state":"draft","merge_status":"checking"}`), &mr))
	assert.Equal(t, MergeRequestState("draft"), mr.State)
	assert.Equal(t, MergeStatus("checking"), mr.MergeStatus)

	var b Build
	require.NoError(t, json.Unmarshal([]byte(`{"status":"manual"}`), &b))
	assert.Equal(t, BuildStatus("manual"), b.Status)

	out, err := json.Marshal(&mr)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"state":"draft"`)
	assert.Contains(t, string(out), `"merge_status":"checking"`)
	out, err = json.Marshal(&b)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"status":"manual"`)
}

// TestStatesCompareWithConstants: a record's state compares with the
// constants without a conversion.
func TestStatesCompareWithConstants(t *testing.T) {
	var is Issue
	var mr MergeRequest
	var m Milestone
	var b Build
	var u User
	require.NoError(t, json.Unmarshal([]byte(`{"state":"reopened"}`), &is))
	require.NoError(t, json.Unmarshal([]byte(`{"state":"locked","merge_status":"cannot_be_merged"}`), &mr))
	require.NoError(t, json.Unmarshal([]byte(`{"state":"active"}`), &m))
	require.NoError(t, json.Unmarshal([]byte(`{"status":"canceled"}`), &b))
	require.NoError(t, json.Unmarshal([]byte(`{"state":"blocked"}`), &u))
	assert.True(t, is.State == IssueReopened)
	assert.True(t, mr.State == MergeRequestLocked && mr.MergeStatus == MergeStatusCannotBeMerged)
	assert.True(t, m.State == MilestoneActive)
	assert.True(t, b.Status == BuildCanceled)
	assert.True(t, u.State == UserBlocked)
}
