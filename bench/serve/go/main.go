// The peer of `rimeflake serve` in bench/serve: Go's net/http (HTTP/1.1 and HTTP/2 cleartext)
// on bwmarrin/snowflake, the Go library most services of this kind are written on. It answers
// what the bench asks: GET /id (one ID, a line) and GET /ids?n=N (N IDs, a line each).
//
// go run . -listen 127.0.0.1:0 prints "go-snowflake: serving on http://ADDR" on stderr.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"

	"github.com/bwmarrin/snowflake"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	node, err := snowflake.NewNode(1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /id", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		b := strconv.AppendInt(make([]byte, 0, 24), node.Generate().Int64(), 10)
		w.Write(append(b, '\n'))
	})
	mux.HandleFunc("GET /ids", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 || n > 10000 {
			http.Error(w, "n: 1 to 10000", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		b := make([]byte, 0, n*20)
		for i := 0; i < n; i++ {
			b = strconv.AppendInt(b, node.Generate().Int64(), 10)
			b = append(b, '\n')
		}
		w.Write(b)
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &protocols}
	fmt.Fprintf(os.Stderr, "go-snowflake: serving on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
