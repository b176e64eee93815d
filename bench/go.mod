module github.com/collabsvc/collab/bench

go 1.25.0

require (
	github.com/collabsvc/collab v0.1.0
	github.com/stretchr/testify v1.12.1
	github.com/xanzy/go-gitlab v0.5.1
	gitlab.com/gitlab-org/api/client-go v1.46.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/oauth2 v0.34.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/time v0.14.0 // indirect
)
