package web

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/evidence"
	"github.com/parleyhq/parley/internal/lazyre"
	"github.com/parleyhq/parley/internal/textline"
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
	// The form that composes a message by its parts: the convention's intents, and what was
	// typed into it when a post by parts was refused (nil otherwise).
	Intents []string
	Parts   *partsForm

	Search *searchView // the search tab
}

// partsForm is the post-by-parts form as typed.
type partsForm struct {
	Intent, Topic, To, Re, Facts string
}

// searchView is a search and its results, each with the link to its message.
type searchView struct {
	Query   string
	Results []searchResult
	More    bool
}

type searchResult struct {
	parley.SearchHit
	Href string
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
	// One time format in the UI: ISO basic UTC to the second, as history writes message
	// times, with the long form in a tooltip and RFC 3339 for <time datetime>.
	"iso":  func(t any) string { return isoTime(t) },
	"long": func(t any) string { return longTime(t) },
	"rfc":  func(t any) string { return rfcTime(t) },
	// mentions reports whether text already names t (to the minute or the second), so a time
	// the line itself writes is not shown twice.
	"mentions": mentionsTime,
	// verdict is the class word of an evidence verdict: verified, unverified, failed.
	"verdict": verdictClass,
	// vword is the verdict's status word as written (unproven stays unproven); vdetail what
	// follows it.
	"vword":   func(text string) string { w, _ := verdictParts(text); return w },
	"vdetail": func(text string) string { _, d := verdictParts(text); return d },
	"pct":     func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" },
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

// asTime accepts a time.Time or a *time.Time (nil: the zero time, ok false).
func asTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), true
	case *time.Time:
		if t != nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func isoTime(v any) string {
	t, ok := asTime(v)
	if !ok {
		return ""
	}
	return t.Format(textline.TimeFormat)
}

// longFormat is the tooltip form of a time: Tuesday 1 December 2026, 16:57:03 UTC.
const longFormat = "Monday 2 January 2006, 15:04:05 UTC"

func longTime(v any) string {
	t, ok := asTime(v)
	if !ok {
		return ""
	}
	return t.Format(longFormat)
}

func rfcTime(v any) string {
	t, ok := asTime(v)
	if !ok {
		return ""
	}
	return t.Format(time.RFC3339)
}

// mentionsTime reports whether text writes t in ISO basic, to the minute or to the second.
func mentionsTime(text string, v any) bool {
	t, ok := asTime(v)
	if !ok {
		return false
	}
	return strings.Contains(text, t.Format("20060102T1504Z")) || strings.Contains(text, t.Format(textline.TimeFormat))
}

// verdictClass reads the status word that starts an evidence verdict or a server note's
// verdict ("verified: commit 3f9a2c1", "ev#1 unverified: …", "claim#1 unproven: …") and
// returns the class word for it: verified, unverified (which covers unproven) or failed; ""
// when the text carries no verdict.
func verdictClass(text string) string {
	w, _ := verdictParts(text)
	switch w {
	case "":
		return ""
	case evidence.Verified:
		return "verified"
	case evidence.Failed:
		return "failed"
	}
	return "unverified" // unverified or unproven: not shown either way
}

// verdictParts splits a verdict into its status word and the reason after it: "verified:
// commit 3f9a2c1" is verified and "commit 3f9a2c1". The word is "" when text has no verdict.
func verdictParts(text string) (word, detail string) {
	m := verdictRE.FindStringSubmatchIndex(text)
	if m == nil {
		return "", text
	}
	word = text[m[2]:m[3]]
	detail = strings.TrimSpace(strings.TrimPrefix(text[m[1]:], ":"))
	return word, detail
}

// verdictRE matches a verdict, alone or after the label a server note gives it.
var verdictRE = lazyre.New(`^(?:(?:ev|done|claim)(?:#\S+| line \d+) )?(verified|unverified|unproven|failed)\b`)

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
	for _, p := range []string{"signin", "rooms", "room", "state", "stats", "search", "error", "lab"} {
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
	if f := h.takeFlash(u.sid, v.Room); f != nil && v.CanPost {
		v.Draft, v.Error, v.Hint, v.Diagnostics, v.Parts = f.draft, f.err, f.hint, f.diagnostics, f.parts
	}
	v.Intents = convention.Intents
	v.PostKey = randomID()[:22]
	h.render(w, r, http.StatusOK, "room", v)
	return nil
}

// loadTranscript fills v with the room's latest messages, or with an earlier page of them
// (?after=N, when N+limit is before the end), read as the signed-in caller: a seat's page view
// counts as its read, as any other read of the room does.
func (h *Handler) loadTranscript(r *http.Request, u *user, v *view) error {
	ctx := r.Context()
	limit := h.opts.TranscriptLimit
	var msgs []*parley.Message
	var last int64
	if n, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64); err == nil && n >= 0 {
		if msgs, last, err = h.svc.Messages(ctx, u.caller, v.Room, n, limit, parley.CountRead); err != nil {
			return err
		}
		if n+int64(limit) < last {
			v.Paged = true
		} else if from := max(0, last-int64(limit)); from < n {
			// Not an earlier page after all: the latest are shown, and only the ones not read
			// yet are read (and counted).
			before, _, err := h.svc.Messages(ctx, u.caller, v.Room, from, int(n-from), parley.CountRead)
			if err != nil {
				return err
			}
			msgs = append(before, msgs...)
		}
	}
	if msgs == nil {
		var err error
		if msgs, last, err = h.svc.Messages(ctx, u.caller, v.Room, parley.Latest, limit, parley.CountRead); err != nil {
			return err
		}
	}
	// The page may hold fewer than limit: at the start of the room, or when the messages
	// are so large that a page of history text holds fewer.
	after := last
	if len(msgs) > 0 {
		after = msgs[0].Seq - 1
	}
	v.Messages = make([]*message, len(msgs))
	for i, m := range msgs {
		v.Messages[i] = transcriptMessage(m)
	}
	v.First, v.Last, v.Earlier = after+1, after, -1
	if after > 0 {
		v.Earlier = max(0, after-int64(limit))
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
	var parts *partsForm
	var res *parley.PostResult
	if r.PostFormValue("mode") == "parts" {
		parts = &partsForm{Intent: r.PostFormValue("intent"), Topic: strings.TrimSpace(r.PostFormValue("topic")),
			To: r.PostFormValue("to"), Re: strings.TrimSpace(r.PostFormValue("re")), Facts: r.PostFormValue("facts")}
		draft = ""
		var d *parley.Draft
		if d, err = parts.draft(); err == nil {
			res, err = h.svc.PostDraft(r.Context(), u.caller, v.Room, d, r.PostFormValue("key"))
		}
	} else {
		// Browsers send textarea lines as CRLF; the convention's lines end in LF.
		body := strings.ReplaceAll(draft, "\r\n", "\n")
		res, err = h.svc.Post(r.Context(), u.caller, v.Room, []byte(body), r.PostFormValue("key"))
	}
	if err == nil {
		http.Redirect(w, r, fmt.Sprintf("/rooms/%s#m%d", v.Room, res.Seq), http.StatusSeeOther)
		return nil
	}
	code := parley.ErrorCode(err)
	if code == parley.EINTERNAL || code == parley.EFORBIDDEN || code == parley.ENOTFOUND {
		return err
	}
	// A refusal the person can fix: back to the room (303, so a reload does not post again),
	// which shows the draft and the findings once, from the session.
	f := &flash{room: v.Room, draft: draft, parts: parts, err: parley.ErrorMessage(err), at: h.opts.Now()}
	if pe, ok := err.(*parley.Error); ok {
		f.hint = pe.Hint
		if ds, ok := pe.Fields["diagnostics"].([]parley.Diagnostic); ok {
			f.diagnostics = ds
		}
		if seq, ok := pe.Fields["seq"]; ok && code == parley.ECONFLICT {
			f.err += fmt.Sprintf(" (the original is #%v)", seq)
		}
	}
	h.setFlash(u.sid, f)
	http.Redirect(w, r, "/rooms/"+url.PathEscape(v.Room)+"#post-h", http.StatusSeeOther)
	return nil
}

// draft reads the post-by-parts form: addressees separated by commas or spaces, one fact per
// line of the textarea (blank lines skipped), re a seq or empty.
func (p *partsForm) draft() (*parley.Draft, error) {
	d := &parley.Draft{Intent: p.Intent, Topic: p.Topic,
		To: strings.FieldsFunc(p.To, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })}
	if p.Re != "" {
		re, err := strconv.ParseInt(p.Re, 10, 64)
		if err != nil || re <= 0 {
			return nil, parley.Errorf(parley.EINVALID, "“answers message” is %q, not a message's seq", p.Re).
				WithHint("give the number after # of the message this one answers, or leave it empty")
		}
		d.Re = re
	}
	for _, l := range strings.Split(p.Facts, "\n") {
		if l = strings.TrimSuffix(l, "\r"); strings.TrimSpace(l) != "" {
			d.Lines = append(d.Lines, l)
		}
	}
	return d, nil
}

// search shows the room's messages holding words of ?q=, best first, each linked to its
// place in the transcript. The search is the signed-in caller's, with history's access rules,
// and counts as a seat's read.
func (h *Handler) search(w http.ResponseWriter, r *http.Request, u *user) error {
	v, err := h.roomView(r, u, "search")
	if err != nil {
		return err
	}
	q := r.URL.Query().Get("q")
	v.Title = v.Room + " · search"
	v.Search = &searchView{Query: q}
	status := http.StatusOK
	if strings.TrimSpace(q) != "" {
		res, err := h.svc.Search(r.Context(), u.caller, v.Room, q, parley.SearchDefaultLimit)
		switch {
		case parley.ErrorCode(err) == parley.EINVALID:
			v.Error, status = parley.ErrorMessage(err), http.StatusBadRequest
			if pe, ok := err.(*parley.Error); ok {
				v.Hint = pe.Hint
			}
		case err != nil:
			return err
		default:
			v.Search.More = res.More
			for _, hit := range res.Results {
				// The transcript page that starts with the message, scrolled to it.
				href := fmt.Sprintf("/rooms/%s?after=%d#m%d", url.PathEscape(v.Room), hit.Seq-1, hit.Seq)
				v.Search.Results = append(v.Search.Results, searchResult{SearchHit: hit, Href: href})
			}
		}
	}
	h.render(w, r, status, "search", v)
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

// topics lists the topics of the room's convention messages, each where it was last named,
// most recent first. It takes them from the topic the store keeps with each message: no
// history text is rendered or parsed, and nothing is counted, since no message is shown. It
// reads the room's latest topicScan messages a page at a time, so a page of a very long room
// costs a bounded read; a topic not named since is still reachable by ?topic=.
func (h *Handler) topics(r *http.Request, u *user, room string) ([]string, error) {
	ctx := r.Context()
	_, last, err := h.svc.Messages(ctx, u.caller, room, parley.Latest, 1, parley.NoCount)
	if err != nil {
		return nil, err
	}
	named := map[string]int64{} // topic -> the last seq naming it
	for after := max(0, last-topicScan); after < last; {
		msgs, _, err := h.svc.Messages(ctx, u.caller, room, after, topicPage, parley.NoCount)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			if m.Topic != "" && m.Format == parley.FormatConvention {
				named[m.Topic] = m.Seq
			}
		}
		after = msgs[len(msgs)-1].Seq
	}
	out := make([]string, 0, len(named))
	for t := range named {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Compare(named[b], named[a]) })
	return out, nil
}

// topicPage and topicScan bound topics: the messages read at a time, and in all.
const (
	topicPage = 500
	topicScan = 20000
)

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
