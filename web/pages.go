package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
)

// view is everything a page template may show.
type view struct {
	Title string
	User  *user
	Error string
	Hint  string
	Next  string

	Room     string
	Tab      string // room, state, stats: which room tab is current
	Rooms    []*parley.Room
	Messages []*message
	First    int64 // seq of the first message shown
	Last     int64 // seq of the last message shown (the live stream continues after it)
	Earlier  int64 // ?after= for the page of earlier messages; -1 when there are none
	Paged    bool  // an older page: no live updates, a link back to the latest
	Inbox    *parley.Inbox
	Topics   []string
	States   []*parley.StateRecord
	Charts   []*chart
	Stats    *parley.RoomStats

	// The post form: the draft to show again after a refusal, its findings, a fresh
	// idempotency key so that submitting the same form twice posts once.
	CanPost     bool
	Draft       string
	Diagnostics []parley.Diagnostic
	PostKey     string
}

// CSRF is the session's form token, for the templates.
func (v *view) CSRF() string {
	if v.User == nil {
		return ""
	}
	return v.User.csrf
}

var funcs = template.FuncMap{
	// dict passes several values to a sub-template.
	"dict": func(kv ...any) map[string]any {
		m := make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	"join": strings.Join,
	"has":  strings.Contains,
	"iso":  func(t time.Time) string { return t.UTC().Format("20060102T1504Z") },
	"pct":  func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" },
	"num": func(n any) string {
		switch v := n.(type) {
		case int:
			return group(int64(v))
		case int64:
			return group(v)
		case float64:
			return group(int64(v + 0.5))
		}
		return fmt.Sprint(n)
	},
}

// group writes n with thin-space thousands separators: 12 345.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func (h *Handler) parseTemplates() {
	h.pages = map[string]*template.Template{}
	for _, p := range []string{"signin", "rooms", "room", "state", "stats", "error"} {
		h.pages[p] = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/message.html", "templates/"+p+".html"))
	}
	h.msgTpl = h.pages["room"]
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	var buf bytes.Buffer
	if err := h.pages[page].ExecuteTemplate(&buf, "layout", v); err != nil {
		h.log.Error("web: render", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	// Pages show what a token may see; no shared cache may keep them.
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (h *Handler) rooms(w http.ResponseWriter, r *http.Request, u *user) error {
	rooms, err := h.svc.Rooms(r.Context(), u.caller)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "rooms", &view{Title: "Rooms", User: u, Rooms: rooms})
	return nil
}

// reader is the caller the UI reads history as, once roomView (or Watch) has checked that the
// signed-in caller may see the room. The service counts a seat's history reads as model input
// (read_tokens, and the prompt-cache projection, which follows each seat's read cursor); a
// person paging through the transcript is neither, and reading as the seat, one message per
// call, would falsify both.
var reader = &parley.Caller{Admin: true}

// roomView loads what every tab of a room shows: that the room exists and the caller may see
// it, and the signed-in seat's inbox.
func (h *Handler) roomView(r *http.Request, u *user, tab string) (*view, error) {
	name := r.PathValue("room")
	rm, err := h.svc.Room(r.Context(), u.caller, name)
	if err != nil {
		return nil, err
	}
	v := &view{Title: rm.Name, User: u, Room: rm.Name, Tab: tab}
	if u.caller.Seat != nil {
		if v.Inbox, err = h.svc.Inbox(r.Context(), u.caller, rm.Name); err != nil {
			return nil, err
		}
		v.CanPost = true
	}
	return v, nil
}

func (h *Handler) room(w http.ResponseWriter, r *http.Request, u *user) error {
	v, err := h.roomView(r, u, "room")
	if err != nil {
		return err
	}
	if err := h.loadTranscript(r, u, v); err != nil {
		return err
	}
	v.PostKey = randomID()[:22]
	h.render(w, r, http.StatusOK, "room", v)
	return nil
}

// loadTranscript fills v with the room's latest messages.
func (h *Handler) loadTranscript(r *http.Request, u *user, v *view) error {
	ctx := r.Context()
	// Seqs are gapless from 1, so the message count is the last seq: one cheap query
	// instead of reading the whole history to find the end.
	st, err := h.svc.Stats(ctx, u.caller, v.Room)
	if err != nil {
		return err
	}
	limit := int64(h.opts.TranscriptLimit)
	after, end := max(0, st.Messages-limit), int64(-1)
	if q := r.URL.Query().Get("after"); q != "" {
		if n, err := strconv.ParseInt(q, 10, 64); err == nil && n >= 0 && n+limit < st.Messages {
			after, end, v.Paged = n, n+limit, true
		}
	}
	msgs, err := h.messages(ctx, v.Room, after, end)
	if err != nil {
		return err
	}
	v.Messages, v.First, v.Last, v.Earlier = msgs, after+1, after, -1
	if after > 0 {
		v.Earlier = max(0, after-limit)
	}
	if len(msgs) > 0 {
		v.Last = msgs[len(msgs)-1].Seq
	}
	return nil
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request, u *user) error {
	v, err := h.roomView(r, u, "room")
	if err != nil {
		return err
	}
	draft := r.PostFormValue("body")
	// Browsers send textarea lines as CRLF; the convention's lines end in LF.
	body := strings.ReplaceAll(draft, "\r\n", "\n")
	res, err := h.svc.Post(r.Context(), u.caller, v.Room, []byte(body), r.PostFormValue("key"))
	if err == nil {
		http.Redirect(w, r, fmt.Sprintf("/rooms/%s#m%d", v.Room, res.Seq), http.StatusSeeOther)
		return nil
	}
	code := parley.ErrorCode(err)
	if code == parley.EINTERNAL || code == parley.EFORBIDDEN || code == parley.ENOTFOUND {
		return err
	}
	// A refusal the person can fix: show the page again with the draft and the findings.
	v.Draft = draft
	v.Error = parley.ErrorMessage(err)
	if pe, ok := err.(*parley.Error); ok {
		v.Hint = pe.Hint
		if ds, ok := pe.Fields["diagnostics"].([]parley.Diagnostic); ok {
			v.Diagnostics = ds
		}
		if seq, ok := pe.Fields["seq"]; ok && code == parley.ECONFLICT {
			v.Error += fmt.Sprintf(" (the original is #%v)", seq)
		}
	}
	if err := h.loadTranscript(r, u, v); err != nil {
		return err
	}
	v.PostKey = randomID()[:22]
	h.render(w, r, statusOf[code], "room", v)
	return nil
}

func (h *Handler) state(w http.ResponseWriter, r *http.Request, u *user) error {
	v, err := h.roomView(r, u, "state")
	if err != nil {
		return err
	}
	v.Title = v.Room + " · state"
	topics, err := h.topics(r, u, v.Room)
	if err != nil {
		return err
	}
	v.Topics = topics
	if t := r.URL.Query().Get("topic"); t != "" {
		topics = []string{t}
	}
	for _, t := range topics {
		st, err := h.svc.State(r.Context(), u.caller, v.Room, t)
		if err != nil {
			return err
		}
		v.States = append(v.States, st)
	}
	h.render(w, r, http.StatusOK, "state", v)
	return nil
}

// topics lists the topics named in the room's convention headers, most recent first. It
// reads the history a page at a time (so memory stays bounded however large the room) and
// takes the line after each `#<seq> ` line: the server refuses bodies with such lines, and a
// wrong guess here would only add a link.
func (h *Handler) topics(r *http.Request, u *user, room string) ([]string, error) {
	var out []string // oldest first, each topic where it was last named
	for after := int64(0); ; {
		hist, last, err := h.svc.History(r.Context(), reader, room, after, 0)
		if err != nil {
			return nil, err
		}
		if last <= after {
			break
		}
		after = last
		lines := strings.Split(string(hist), "\n")
		for i := 0; i+1 < len(lines); i++ {
			l := lines[i]
			if len(l) < 2 || l[0] != '#' || l[1] < '0' || l[1] > '9' || !convention.Looks(lines[i+1]) {
				continue
			}
			m, _ := convention.Parse(lines[i+1])
			if t := m.Header.Topic; t != "" {
				out = slices.DeleteFunc(out, func(s string) bool { return s == t })
				out = append(out, t)
			}
		}
	}
	slices.Reverse(out)
	return out, nil
}

func (h *Handler) stats(w http.ResponseWriter, r *http.Request, u *user) error {
	v, err := h.roomView(r, u, "stats")
	if err != nil {
		return err
	}
	v.Title = v.Room + " · stats"
	st, err := h.svc.Stats(r.Context(), u.caller, v.Room)
	if err != nil {
		return err
	}
	v.Stats = st
	v.Charts = statsCharts(st)
	h.render(w, r, http.StatusOK, "stats", v)
	return nil
}

// sortedKeys returns m's keys, largest value first, then by name.
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}
