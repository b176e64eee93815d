package collab

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClientBaseURL(t *testing.T) {
	for _, in := range []string{
		"https://collab.example.com", "https://collab.example.com/", "https://collab.example.com/api/v3",
		"https://collab.example.com/api/v3/", " https://collab.example.com ",
	} {
		c, err := NewClient(in)
		require.NoError(t, err, in)
		assert.Equal(t, "https://collab.example.com/api/v3/", c.BaseURL().String(), in)
	}
	c, err := NewClient("https://h.example/prefix/api/v3")
	require.NoError(t, err)
	assert.Equal(t, "https://h.example/prefix/api/v3/", c.BaseURL().String())
	for _, bad := range []string{"", "collab.example.com", "ftp://x", "https://", "://x", "https://u:p@h.example", "https://h.example/?private_token=x", "http://h.example/%zz"} {
		_, err := NewClient(bad)
		assert.Error(t, err, bad)
	}
}

func TestFakeUnauthorized(t *testing.T) {
	c, srv := newFakeClient(t)
	_ = c
	bad := clientAs(t, srv, "nope")
	req, err := bad.NewRequest(context.Background(), http.MethodGet, "projects", nil)
	require.NoError(t, err)
	_, err = bad.Do(req, nil)
	assert.ErrorIs(t, err, ErrUnauthorized)
}
