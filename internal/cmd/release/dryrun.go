package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// sumPattern is what GONOSUMDB names in the scratch module: this
// repository's modules, which no checksum database knows before they are
// tagged. Every other module is checked against the checksum database.
const sumPattern = "github.com/collabsvc/collab"

// heavy are the module path prefixes that a program importing only the root
// package must not have in its module graph.
var heavy = []string{
	"github.com/spf13/cobra",
	"github.com/itchyny/gojq",
	"github.com/redis/go-redis",
	"gitlab.com/gitlab-org/api/client-go",
	"go.opentelemetry.io",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/google/jsonschema-go",
}

// A trial is a program a user of one library module writes: it is built
// in a scratch module of its own that gets the module's packages alone.
type trial struct {
	module string   // the module's directory
	get    []string // the packages go get asks for, at the version
	src    string   // main.go
	run    bool     // run it too: it prints collab.Version
}

var trials = []trial{
	{module: ".", get: []string{"github.com/collabsvc/collab"}, run: true, src: `package main

import (
	"fmt"

	"github.com/collabsvc/collab"
)

func main() {
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken("token"))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(collab.Version)
}
`},
	{module: "redis", get: []string{"github.com/collabsvc/collab/redis/redisqueue", "github.com/collabsvc/collab/redis/redislimit"}, src: `package main

import (
	"github.com/collabsvc/collab/redis/redislimit"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/redis/go-redis/v9"
)

func main() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	if _, err := redislimit.New(rdb, "token", redislimit.Options{Rate: 10}); err != nil {
		panic(err)
	}
	_ = redisqueue.Options{}
}
`},
	{module: "otelcollab", get: []string{"github.com/collabsvc/collab/otelcollab"}, src: `package main

import (
	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/otelcollab"
)

func main() {
	obs, err := otelcollab.New()
	if err != nil {
		panic(err)
	}
	if _, err := collab.NewClient("https://collab.example.com", collab.WithObserver(obs)); err != nil {
		panic(err)
	}
}
`},
}

// cliModule is the directory of the module users go install.
const cliModule = "cmd/collab"

// fakeCommand is the root module's command users go install: the fake
// server for scripts.
const fakeCommand = "cmd/collabfake"

// A scratch is a place outside the repository where the go command sees
// only the file proxy and the public module proxy, as a user's machine would.
type scratch struct {
	dir string
	env []string
	log func(format string, args ...any)
}

// newScratch prepares dir with the proxy at proxyDir. Its module cache is
// its own, so that no module zipped here lands in the user's cache; the
// user's download cache serves as a second proxy, so that third-party
// modules already fetched are not fetched again.
func newScratch(dir, proxyDir string, log func(string, ...any)) (*scratch, error) {
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	proxies := []string{"file://" + proxyDir}
	if c := strings.TrimSpace(string(cache)); c != "" {
		proxies = append(proxies, "file://"+filepath.Join(c, "cache", "download"))
	}
	proxies = append(proxies, "https://proxy.golang.org")
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOWORK", "GOFLAGS", "GOPROXY", "GONOPROXY", "GOPRIVATE", "GONOSUMDB", "GONOSUMCHECK", "GOMODCACHE", "GOBIN", "GOTOOLCHAIN", "GOINSECURE":
		default:
			env = append(env, kv)
		}
	}
	// -trimpath keeps this module cache's path out of the build cache's keys,
	// so that the next dry run reuses what this one compiled.
	env = append(env, "GOWORK=off", "GOFLAGS=-modcacherw -trimpath", "GOTOOLCHAIN=local",
		"GOPROXY="+strings.Join(proxies, ","), "GONOSUMDB="+sumPattern,
		"GOMODCACHE="+filepath.Join(dir, "modcache"), "GOBIN="+filepath.Join(dir, "bin"))
	return &scratch{dir: dir, env: env, log: log}, nil
}

// run runs a command in the scratch directory sub, and returns its output.
func (s *scratch) run(sub string, name string, args ...string) (string, error) {
	s.log("$ %s %s", name, strings.Join(args, " "))
	cmd := exec.Command(name, args...)
	cmd.Dir = filepath.Join(s.dir, sub)
	cmd.Env = s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), sub, err, out.String())
	}
	return out.String(), nil
}

// try builds a trial's program against the module at version v, in a
// module of its own.
func (s *scratch) try(tr trial, v string) error {
	sub := "try-" + strings.ReplaceAll(tr.module, "/", "-")
	if tr.module == "." {
		sub = "try-root"
	}
	if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.dir, sub, "main.go"), []byte(tr.src), 0o644); err != nil {
		return err
	}
	if _, err := s.run(sub, "go", "mod", "init", "example.com/"+sub); err != nil {
		return err
	}
	get := []string{"get"}
	for _, p := range tr.get {
		get = append(get, p+"@"+v)
	}
	if _, err := s.run(sub, "go", get...); err != nil {
		return err
	}
	if _, err := s.run(sub, "go", "build", "-o", os.DevNull, "."); err != nil {
		return err
	}
	if !tr.run {
		return nil
	}
	out, err := s.run(sub, "go", "run", ".")
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(out); "v"+got != v {
		return fmt.Errorf("collab.Version is %q at %s: set it to %q in client.go", got, v, strings.TrimPrefix(v, "v"))
	}
	return s.checkGraph(sub)
}

// checkGraph fails when the module graph of the program in sub holds a
// heavy module.
func (s *scratch) checkGraph(sub string) error {
	out, err := s.run(sub, "go", "list", "-m", "all")
	if err != nil {
		return err
	}
	var found []string
	for _, m := range strings.Split(strings.TrimSpace(out), "\n") {
		for _, h := range heavy {
			if strings.HasPrefix(m, h) {
				found = append(found, m)
			}
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("a root-only program's module graph holds %s", strings.Join(found, ", "))
	}
	s.log("a root-only program's module graph: %d modules, none of %s", strings.Count(out, "\n"), strings.Join(heavy, ", "))
	return nil
}

// install installs the command pkg at version v, as its users do, and
// returns the program's path.
func (s *scratch) install(pkg, v string) (string, error) {
	if _, err := s.run(".", "go", "install", pkg+"@"+v); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, "bin", filepath.Base(pkg)), nil
}

// tryCommands installs the commands at version v and runs them: collab
// must report v as its version.
func (s *scratch) tryCommands(cli, fake, v string) error {
	bin, err := s.install(cli, v)
	if err != nil {
		return err
	}
	if _, err := s.run(".", bin, "--help"); err != nil {
		return err
	}
	out, err := s.run(".", bin, "version")
	if err != nil {
		return err
	}
	if first, _, _ := strings.Cut(out, "\n"); first != "collab "+v {
		return fmt.Errorf("%s version printed %q, want %q", bin, first, "collab "+v)
	}
	if bin, err = s.install(fake, v); err != nil {
		return err
	}
	_, err = s.run(".", bin, "-h")
	return err
}
