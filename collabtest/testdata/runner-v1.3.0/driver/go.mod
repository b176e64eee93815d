module runnerconformance

go 1.23

require (
	github.com/BurntSushi/toml v0.0.0-00010101000000-000000000000 // indirect
	github.com/Sirupsen/logrus v0.0.0-00010101000000-000000000000
	github.com/codegangsta/cli v0.0.0-00010101000000-000000000000 // indirect
	github.com/docker/docker v0.0.0-00010101000000-000000000000 // indirect
	github.com/fsouza/go-dockerclient v0.0.0-00010101000000-000000000000 // indirect
	github.com/opencontainers/runc v0.0.0-00010101000000-000000000000 // indirect
	github.com/ramr/go-reaper v0.0.0-00010101000000-000000000000 // indirect
	gitlab.com/ayufan/golang-cli-helpers v0.0.0-00010101000000-000000000000 // indirect
	gitlab.com/gitlab-org/gitlab-ci-multi-runner v0.0.0-00010101000000-000000000000
	golang.org/x/crypto v0.0.0-00010101000000-000000000000 // indirect
	gopkg.in/yaml.v1 v0.0.0-00010101000000-000000000000 // indirect
)

// The runner and the dependencies its v1.3.0 tag pins, unpacked from
// ../runner-v1.3.0-src.tar.gz next to this directory by the test.
replace (
	github.com/BurntSushi/toml => ../third_party/github.com/BurntSushi/toml
	github.com/Sirupsen/logrus => ../third_party/github.com/Sirupsen/logrus
	github.com/codegangsta/cli => ../third_party/github.com/codegangsta/cli
	github.com/docker/docker => ../third_party/github.com/docker/docker
	github.com/fsouza/go-dockerclient => ../third_party/github.com/fsouza/go-dockerclient
	github.com/opencontainers/runc => ../third_party/github.com/opencontainers/runc
	github.com/ramr/go-reaper => ../third_party/github.com/ramr/go-reaper
	gitlab.com/ayufan/golang-cli-helpers => ../third_party/gitlab.com/ayufan/golang-cli-helpers
	gitlab.com/gitlab-org/gitlab-ci-multi-runner => ../third_party/gitlab.com/gitlab-org/gitlab-ci-multi-runner
	golang.org/x/crypto => ../third_party/golang.org/x/crypto
	gopkg.in/yaml.v1 => ../third_party/gopkg.in/yaml.v1
)
