// Fetches IDs from `rimeflake serve` with net/http, from many goroutines at once (HTTP/1.1
// keep-alive): prints every ID.
//
// go run client.go BASE_URL GOROUTINES REQUESTS: each asks /id REQUESTS times and /ids?n=100
// once; the odd-numbered goroutines share one HTTP/2 cleartext client.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

func get(c *http.Client, url string) string {
	r, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != 200 {
		fmt.Fprintln(os.Stderr, url, r.StatusCode, string(body), err)
		os.Exit(1)
	}
	return string(body)
}

func main() {
	base := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	requests, _ := strconv.Atoi(os.Args[3])
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = n
	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	clients := []*http.Client{http.DefaultClient, {Transport: &http.Transport{Protocols: h2c}}}
	results := make([][]uint64, n)
	var wg sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < requests; i++ {
				id, err := strconv.ParseUint(strings.TrimSpace(get(clients[g%2], base+"/id")), 10, 64)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				results[g] = append(results[g], id)
			}
			for _, line := range strings.Fields(get(clients[g%2], base+"/ids?n=100")) {
				id, err := strconv.ParseUint(line, 10, 64)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				results[g] = append(results[g], id)
			}
		}(g)
	}
	wg.Wait()
	for _, ids := range results {
		for _, id := range ids {
			fmt.Println(id)
		}
	}
}
