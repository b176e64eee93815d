package collab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDispositionFilename(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "",
		"attachment; filename=artifacts.zip":  "artifacts.zip",
		`attachment; filename="my files.zip"`: "my files.zip",
		"attachment; filename=my files.zip":   "my files.zip",
		`infile; filename="12.log"`:           "12.log",
		"attachment; filename*=UTF-8''%C3%A9t%C3%A9.zip": "été.zip",
		"attachment; filename=../../etc/passwd":          "passwd",
		`attachment; filename="..\\..\\boot.ini"; x=y`:   "boot.ini",
		`attachment; filename=a b.zip; size=3`:           "a b.zip",
		"attachment; filename=..":                        "",
		"attachment":                                     "",
		"attachment; filename=\"/\"":                     "",
		"attachment; filename=\"sub/dir/report.tar.gz\"": "report.tar.gz",
	} {
		assert.Equal(t, want, dispositionFilename(in), in)
	}
}
