package redislimit_test

import (
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/redis/redislimit"
)

// Example_docs is the shared limiter's snippet of docs/client.md; compiled,
// not run, as it needs a Redis server and the API.
func Example_docs() {
	url, token := "https://collab.example.com", os.Getenv("COLLAB_TOKEN")
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	lim, err := redislimit.New(rdb, token, redislimit.Options{Rate: 50, Processes: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := collab.NewClient(url, collab.WithPrivateToken(token), collab.WithSharedLimiter(lim))
	fmt.Println(c, err)
}
