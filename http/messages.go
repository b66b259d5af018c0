package http

import (
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/parleyhq/parley"
)

// postResponse always carries the four fields, empty lists included, so clients need not
// tell a missing field from an empty one.
type postResponse struct {
	Seq      int64               `json:"seq"`
	Tokens   int                 `json:"tokens"`
	Notes    []string            `json:"notes"`
	Warnings []parley.Diagnostic `json:"warnings"`
}

// postJSON is the JSON body of a post: the whole message as body, or its parts, from which
// the server writes the header with n= counted (parley.Draft).
type postJSON struct {
	Body   *string  `json:"body"`
	Intent string   `json:"intent"`
	Topic  string   `json:"topic"`
	To     []string `json:"to"`
	Re     int64    `json:"re"`
	Lines  []string `json:"lines"`
}

// isJSON reports whether a request's Content-Type is application/json.
func isJSON(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if !containsFold(ct, "json") {
		return false // the common text/plain, without parsing it
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// postBufs holds the buffers that text bodies of posts are read into.
var postBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// readCapped appends body to buf, refusing one over limit bytes as readBody does.
func readCapped(body io.Reader, buf []byte, limit int64) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, parley.Errorf(parley.ETOOLARGE, "the request body is over %d bytes", limit)
		}
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, badRequest("resend the request", "reading the request body: %v", err)
		}
	}
}

// containsFold reports whether s holds the lower-case ASCII word in any case: a media type
// that ParseMediaType reads as …json holds "json" so (the type's letters are ASCII tokens).
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// handlePost posts as the caller's seat: a body of any type but JSON is the message, exactly
// as sent; a JSON body ({"body": …} or {"intent","topic","to","re","lines"}) gives the message
// whole or by its parts. 201 for a new message, 200 for an Idempotency-Key replay (the
// original's seq; nothing new stored).
func (s *Server) handlePost(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	key := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	if len(key) > 255 {
		return badRequest("use a key of at most 255 bytes, such as a UUID", "the Idempotency-Key is %d bytes long", len(key))
	}
	var res *parley.PostResult
	if isJSON(r) {
		var in postJSON
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
		parts := in.Intent != "" || in.Topic != "" || in.To != nil || in.Re != 0 || in.Lines != nil
		var err error
		switch {
		case in.Body != nil && parts:
			return badRequest(`send {"body": "<the whole message>"} or {"intent", "topic", "to", "re", "lines"}, not both`,
				"the JSON body gives both body and the message's parts")
		case in.Body != nil:
			res, err = s.svc.Post(r.Context(), c, r.PathValue("room"), []byte(*in.Body), key)
		default:
			res, err = s.svc.PostDraft(r.Context(), c, r.PathValue("room"),
				&parley.Draft{Intent: in.Intent, Topic: in.Topic, To: in.To, Re: in.Re, Lines: in.Lines}, key)
		}
		if err != nil {
			return err
		}
	} else {
		buf := postBufs.Get().(*[]byte)
		body, err := readCapped(r.Body, (*buf)[:0], maxBodyBytes)
		if err == nil {
			closeRead(r)
			res, err = s.svc.Post(r.Context(), c, r.PathValue("room"), body, key)
		}
		if cap(body) <= 64<<10 { // the service has copied what it keeps (parley.RoomService.Post)
			*buf = body[:0]
			postBufs.Put(buf)
		}
		if err != nil {
			return err
		}
	}
	out := postResponse{Seq: res.Seq, Tokens: res.Tokens, Notes: res.Notes, Warnings: res.Warnings}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	if out.Warnings == nil {
		out.Warnings = []parley.Diagnostic{}
	}
	status := http.StatusCreated
	if res.Replay {
		status = http.StatusOK
		w.Header().Set("Idempotent-Replayed", "true")
	}
	var loc [128]byte // built on the stack: one copy, the header's
	l := append(append(loc[:0], "/v1/rooms/"...), r.PathValue("room")...)
	l = strconv.AppendInt(append(l, "/history?after="...), res.Seq-1, 10)
	w.Header()["Location"] = []string{string(append(l, "&limit=1"...))}
	writePost(w, status, out)
	return nil
}

// maxHistoryLimit bounds one page's count; a reader wanting more pages on with after=.
const maxHistoryLimit = 10000

// NextAfterHeader names the response header of a history page that stopped at its message
// count or its byte cap: its value is the after= of the next page. A page without it reached
// the end of the room.
const NextAfterHeader = "X-Parley-Next-After"

// handleHistory serves one page of the byte-stable history text (see parley.HistoryPage: at
// most limit messages, parley.HistoryPageMessages without one, and parley.HistoryPageBytes),
// streamed from the store a few messages at a time. A full page (one that stopped at its count
// or its byte cap) can never change, because history is append-only and notes are frozen at
// post time: it is cacheable for good, says where the next page starts, and the service serves
// it again from memory (its cache of full pages), still counting the read. Any other read
// may grow, so it must be revalidated (cheaply, with the ETag).
//
// The cache is private, not public: the bytes are the same for every seat of the room, but a
// shared cache keyed on the URL alone would hand one room's history to any caller.
func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	after, err := queryInt64(r, "after", 0)
	if err != nil {
		return err
	}
	limit, err := queryInt64(r, "limit", 0)
	if err != nil {
		return err
	}
	if limit > maxHistoryLimit {
		return badRequest("page through with after= and a smaller limit", "limit=%d is over the maximum page of %d messages", limit, maxHistoryLimit)
	}
	page, err := s.svc.HistoryPage(r.Context(), c, r.PathValue("room"), after, int(limit))
	if err != nil {
		return err
	}
	// The tag of the representation this request gets: identity, or gzip (see compressed).
	etag := representationETag(w, `"`+hex.EncodeToString(page.Sum[:16])+`"`, page.Size)
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("X-Parley-Last-Seq", strconv.FormatInt(page.Last, 10))
	if page.Full {
		h.Set(NextAfterHeader, strconv.FormatInt(page.Last, 10))
		h.Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	if gw, ok := w.(*gzipWriter); ok && page.Full && gw.wouldCompress(page.Size) && r.Method != http.MethodHead {
		// A full page never changes: its gzip is compressed once and kept (see gzipPages).
		if gz, err := s.gzPages.get(page); err == nil {
			h.Set("Content-Encoding", "gzip")
			h.Set("Content-Length", strconv.Itoa(len(gz)))
			w.WriteHeader(http.StatusOK)
			w.Write(gz)
			return nil
		} else if r.Context().Err() == nil {
			// Nothing is sent yet: the error goes out as JSON, without the page's headers.
			for _, k := range []string{"ETag", "Cache-Control", "X-Parley-Last-Seq", NextAfterHeader} {
				h.Del(k)
			}
			return err
		}
		panic(http.ErrAbortHandler)
	}
	h.Set("Content-Length", strconv.FormatInt(page.Size, 10))
	w.WriteHeader(http.StatusOK)
	if page.Size == 0 || r.Method == http.MethodHead {
		return nil
	}
	if err := page.Stream(w); err != nil {
		// The status is sent: all that is left is to cut the response short, which the
		// reader sees as a body shorter than its Content-Length.
		if r.Context().Err() == nil {
			s.log.Error("history: streaming a page", "path", r.URL.Path, "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	return nil
}

// etagMatches implements If-None-Match's weak comparison: a list of tags, or "*".
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	in, err := s.svc.Inbox(r.Context(), c, r.PathValue("room"))
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept")
	if wantsJSON(r) || s.inboxText == nil {
		if in.Unanswered == nil {
			in.Unanswered = []parley.InboxAsk{}
		}
		if in.Open == nil {
			in.Open = []parley.InboxAsk{}
		}
		writeJSON(w, http.StatusOK, in)
		return nil
	}
	writeText(w, http.StatusOK, s.inboxText(in))
	return nil
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	rec, err := s.svc.State(r.Context(), c, r.PathValue("room"), r.PathValue("topic"))
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept")
	if wantsJSON(r) || s.stateText == nil {
		writeJSON(w, http.StatusOK, rec)
		return nil
	}
	writeText(w, http.StatusOK, s.stateText(rec))
	return nil
}

// handleRun stores a test-run record. JSON bodies carry their own id; `go test -json` and
// JUnit XML bodies take it from ?id=.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	body, err := readBody(w, r, maxRunBodyBytes)
	if err != nil {
		return err
	}
	run, err := s.svc.PostRun(r.Context(), c, r.PathValue("room"), r.Header.Get("Content-Type"), body, r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, run)
	return nil
}

func (s *Server) handleStats(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	st, err := s.svc.Stats(r.Context(), c, r.PathValue("room"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// handleLint checks a draft as a post would, without posting it.
func (s *Server) handleLint(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	body, err := readBody(w, r, maxBodyBytes)
	if err != nil {
		return err
	}
	diags, err := s.svc.Lint(r.Context(), c, r.PathValue("room"), body)
	if err != nil {
		return err
	}
	if diags == nil {
		diags = []parley.Diagnostic{}
	}
	out := map[string]any{"diagnostics": diags}
	// A cut list ends with a diagnostic that counts the ones left out.
	if n := len(diags); n > 0 && diags[n-1].More > 0 {
		out["more_diagnostics"] = diags[n-1].More
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleMessages answers GET /v1/rooms/{room}/messages?after=N&limit=K: the messages of the
// same page as history (at most limit, 1,000 or 4 MiB), structured, as
// {"messages":[…],"last_seq":N} where last_seq is the room's, so a reader knows whether there
// is more. after=latest gives the latest page. A seat's read is counted as a history read is.
func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	var after int64
	if r.URL.Query().Get("after") == "latest" {
		after = parley.Latest
	} else {
		var err error
		if after, err = queryInt64(r, "after", 0); err != nil {
			return err
		}
	}
	limit, err := queryInt64(r, "limit", 0)
	if err != nil {
		return err
	}
	if limit > maxHistoryLimit {
		return badRequest("page through with after= and a smaller limit", "limit=%d is over the maximum page of %d messages", limit, maxHistoryLimit)
	}
	msgs, last, err := s.svc.Messages(r.Context(), c, r.PathValue("room"), after, int(limit), parley.CountRead)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []*parley.Message{}
	}
	writeJSON(w, http.StatusOK, struct {
		Messages []*parley.Message `json:"messages"`
		LastSeq  int64             `json:"last_seq"`
	}{msgs, last})
	return nil
}
