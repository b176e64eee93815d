package runner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRegisterRunnerPartial: a registration whose id does not fit comes
// back with its token and a *collab.DecodeError that wraps
// collab.FieldErrors, as every call returns a partial record; a body that
// is not JSON comes with no registration.
func TestRegisterRunnerPartial(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusCreated, `{"id": "seventy-seven", "token": "`+testRunnerToken+`"}`, "Content-Type", "application/json")
	reg, err := c.RegisterRunner(context.Background(), testRegistrationToken, nil)
	var de *collab.DecodeError
	require.ErrorAs(t, err, &de)
	var fields collab.FieldErrors
	require.ErrorAs(t, err, &fields)
	assert.Equal(t, "id", fields[0].Path)
	assert.Equal(t, &Registration{Token: collab.Secret(testRunnerToken),
		Extra: map[string]json.RawMessage{"id": json.RawMessage(`"seventy-seven"`)}}, reg)

	m.Reply(http.StatusCreated, `{"id": 77, "token": "`+testRunnerToken+`"`, "Content-Type", "application/json")
	reg, err = c.RegisterRunner(context.Background(), testRegistrationToken, nil)
	require.ErrorAs(t, err, &de)
	assert.False(t, errors.As(err, &fields))
	assert.Nil(t, reg)
}
