// Command genrecords writes the JSON methods of the module's records.
//
// A record is a struct with a field Extra map[string]json.RawMessage, for
// the keys it has no field for. Each one needs an UnmarshalJSON and a
// MarshalJSON that hand it to jsonkeep; genrecords writes them into
// records_gen.go in every package of the module that has records, leaving
// out a method the package already declares by hand. Run it from the
// module root, through
//
//	go generate .
//
// A test fails while any records_gen.go differs from what genrecords writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if err := run("."); err != nil {
		fmt.Fprintln(os.Stderr, "genrecords:", err)
		os.Exit(1)
	}
}

// run writes records_gen.go in every package below root that has records,
// and removes it from a package that has none left.
func run(root string) error {
	dirs, err := packageDirs(root)
	if err != nil {
		return err
	}
	for _, dir := range dirs {
		src, err := generate(dir)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, outFile)
		if src == nil {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
