package collab

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPipeBodyNeverRead(t *testing.T) {
	up := newMultipartUpload("file", "a.zip", io.MultiReader(strings.NewReader("0123456789")))
	body, err := up.body()
	require.NoError(t, err)
	require.NoError(t, body.Close())
	up.stop() // no goroutine was started, nothing to wait for
	_, err = up.body()
	assert.ErrorIs(t, err, errNotRewindable)
	_, err = body.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "a closed body starts nothing")
	up.stop()
}

// TestUploadRewindsFromWhereTheReaderStood checks that GetBody streams the
// same bytes again, from the reader's position when the request was built.
func TestUploadRewindsFromWhereTheReaderStood(t *testing.T) {
	c, _ := newMockClient(t)
	src := strings.NewReader("skip|payload")
	_, err := src.Seek(5, io.SeekStart)
	require.NoError(t, err)
	req, finish, err := c.NewUploadRequest(context.Background(), "uploads", "file", "p.txt", src)
	require.NoError(t, err)
	defer finish()
	first, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	require.NotNil(t, req.GetBody)
	again, err := req.GetBody()
	require.NoError(t, err)
	second, err := io.ReadAll(again)
	require.NoError(t, err)
	assert.Equal(t, string(first), string(second), "a retry resends the body identically")
	assert.Contains(t, string(first), "\r\n\r\npayload\r\n")
	assert.NotContains(t, string(first), "skip")
	assert.True(t, strings.HasPrefix(req.Header.Get("Content-Type"), "multipart/form-data; boundary=collab-"))

	_, _, err = c.NewUploadRequest(context.Background(), "uploads", "", "p.txt", src)
	assert.Error(t, err)
	_, _, err = c.NewUploadRequest(context.Background(), "%zz", "file", "p.txt", src)
	assert.Error(t, err)
	plain, finish2, err := c.NewUploadRequest(context.Background(), "uploads", "file", "p.txt", io.MultiReader(src))
	require.NoError(t, err)
	defer finish2()
	assert.Nil(t, plain.GetBody, "a plain reader is sent once")
	assert.Equal(t, http.MethodPost, plain.Method)
}
