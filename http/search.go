package http

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/parleyhq/parley"
)

// handleSearch finds the room's messages holding words of q, best first:
// GET /v1/rooms/{room}/search?q=redis+limiter&limit=20 → {"query","results":[{"seq","seat",
// "time","topic","lines"}],"more"}. The caller must be able to read the room's history, and
// the search counts as one of its reads (parley.RoomService.Search).
func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	q := r.URL.Query()
	if len(q["q"]) > 1 {
		return badRequest("give the words in one q, e.g. q=redis+limiter", "the query has %d q parameters", len(q["q"]))
	}
	// A malformed request is 400, as the other query parameters' are (the service would say
	// the same with 422, its code for a message that does not hold together).
	switch text := q.Get("q"); {
	case strings.TrimSpace(text) == "":
		return badRequest("give the words to look for, e.g. q=redis+limiter", "the search query (q) is empty")
	case len(text) > parley.SearchMaxQuery:
		return badRequest(fmt.Sprintf("search for a few distinctive words; only the first %d count", parley.SearchMaxWords),
			"the search query is %d bytes long, over the %d a query may be", len(text), parley.SearchMaxQuery)
	}
	limit, err := queryInt64(r, "limit", 0)
	if err != nil {
		return err
	}
	if limit > parley.SearchMaxLimit {
		return badRequest("give limit from 1 to 100, or leave it out for 20", "limit=%d is over the %d results a search returns at most", limit, parley.SearchMaxLimit)
	}
	if _, given := q["limit"]; given && limit == 0 {
		return badRequest("give limit from 1 to 100, or leave it out for 20", "limit=0 asks for no results")
	}
	res, err := s.svc.Search(r.Context(), c, r.PathValue("room"), q.Get("q"), int(limit))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
