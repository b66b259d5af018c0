package http

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPI is the OpenAPI 3.1 description of this package's routes, served at
// GET /openapi.json. It is kept true by openapi_test.go, which sends a real request to every
// route and checks each request and answer against it, and which fails when a route is
// registered here without being described there, or described without being registered.
//
//go:embed openapi.json
var openAPI []byte

// handleOpenAPI serves the document as written; it holds no secret, so no token is needed.
func handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPI)))
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(openAPI)
	}
}
