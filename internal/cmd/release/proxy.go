package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"
)

// maxZipFile is the go command's limit on a module zip's uncompressed size.
const maxZipFile = 500 << 20

// writeProxy writes a file-based module proxy (GOPROXY=file://dir) that
// serves each module of mods at version v, zipped from the tree.
func writeProxy(dir string, t *tree, mods []module, v string) error {
	for _, m := range mods {
		vdir := filepath.Join(dir, escapePath(m.Path), "@v")
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return err
		}
		gomod, err := t.read(filepath.ToSlash(filepath.Join(m.Dir, "go.mod")))
		if err != nil {
			return err
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{v, time.Now().UTC().Truncate(time.Second)})
		if err != nil {
			return err
		}
		for name, data := range map[string][]byte{"list": []byte(v + "\n"), v + ".info": info, v + ".mod": gomod} {
			if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
				return err
			}
		}
		if err := writeZip(filepath.Join(vdir, v+".zip"), t, m, v); err != nil {
			return fmt.Errorf("zip %s@%s: %w", m.Path, v, err)
		}
	}
	return nil
}

// writeZip writes the module zip of m at version v: each file under the
// prefix module@version/, as the Go module zip format asks.
func writeZip(name string, t *tree, m module, v string) (err error) {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	zw := zip.NewWriter(f)
	total := 0
	for _, file := range t.moduleFiles(m.Dir) {
		data, err := t.read(file)
		if err != nil {
			return err
		}
		if total += len(data); total > maxZipFile {
			return fmt.Errorf("the module's files exceed %d bytes", maxZipFile)
		}
		w, err := zw.Create(m.Path + "@" + v + "/" + rel(m.Dir, file))
		if err != nil {
			return err
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// escapePath escapes a module path for a proxy's file names: each capital
// letter becomes '!' and its lower case.
func escapePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return filepath.FromSlash(b.String())
}
