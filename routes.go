package collab

import (
	"net/url"
	"strings"

	"github.com/collabsvc/collab/internal/wire"
)

// matchTemplate names a request built by hand (with NewRequest, as the
// upload and download methods and callers of Do do) by the template of the
// SDK route its path matches: literal segments equal, one path segment for
// each value. The template with the most literal segments wins. A path that
// matches no route the SDK has built is named "", never by its own text.
func (c *Client) matchTemplate(u *url.URL) string {
	rest, ok := strings.CutPrefix(u.EscapedPath(), c.baseURL.EscapedPath())
	if !ok || rest == "" {
		return ""
	}
	segs := strings.Split(rest, "/")
	return wire.MatchTemplate(segs)
}
