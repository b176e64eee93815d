package collabtest_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// Seed a project with an issue, then read it back over HTTP as any client
// would, here with a JSON body to create a second one.
func Example_seedState() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	alice := srv.Seed.User("alice")
	p := srv.Seed.Project(alice, "Webshop", collab.InternalVisibility)
	srv.Seed.Issue(p, alice, "Checkout fails", srv.Seed.Label(p, "bug", "#d9534f"))
	if err := srv.Err(); err != nil {
		fmt.Println(err)
		return
	}

	req, _ := http.NewRequest("POST", srv.URL+"/api/v3/projects/alice%2Fwebshop/issues",
		strings.NewReader(`{"title":"Add a login page","labels":["feature"]}`))
	req.Header.Set("PRIVATE-TOKEN", alice.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("create:", resp.StatusCode)

	req, _ = http.NewRequest("GET", srv.URL+"/api/v3/projects/alice%2Fwebshop/issues?sort=asc", nil)
	req.Header.Set("PRIVATE-TOKEN", alice.Token)
	resp, err = srv.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var issues []struct {
		IID    int      `json:"iid"`
		Title  string   `json:"title"`
		Labels []string `json:"labels"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&issues); err != nil {
		fmt.Println(err)
		return
	}
	for _, is := range issues {
		fmt.Printf("#%d %s %v\n", is.IID, is.Title, is.Labels)
	}
	// Output:
	// create: 201
	// #1 Checkout fails [bug]
	// #2 Add a login page [feature]
}

// Make the next two requests fail with 503, to test a client's retries.
// Failed requests change nothing.
func ExampleServer_FailNext() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	srv.FailNext(2, http.StatusServiceUnavailable)
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest("GET", srv.URL+"/api/v3/projects", nil)
		req.Header.Set("PRIVATE-TOKEN", srv.AdminToken)
		resp, err := srv.Client().Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// Output:
	// 503 0
	// 503 0
	// 200
}
