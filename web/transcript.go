package web

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/internal/sse"
	"github.com/parleyhq/parley/internal/textline"
)

// message is one stored message as the transcript shows it.
type message struct {
	Seq      int64
	Seat     string
	Time     string // as history writes it, and as the page shows it: 20261130T093348Z
	DateTime string // RFC 3339 for <time datetime>
	Long     string // the tooltip: Monday 30 November 2026, 09:33:48 UTC
	Tokens   int    // as the server counted the body when it was posted

	Convention bool
	Intent     string
	Topic      string
	To         []string
	Re         int64
	Lines      []line
	Notes      []note
}

// note is one server note. Verdict is the class word of the evidence verdict it freezes
// (verified, unverified, failed), or "" for a note that carries none; the note's text always
// says the verdict in words too, so colour is never the only signal.
type note struct {
	Text    string
	Verdict string
}

// line is one line of a message body. Kind picks its colour; Label is the visible word, so
// the modality never rests on colour alone.
type line struct {
	Label string // the modality word (req, ask, done…), the fact word, or "" for text
	Key   string // done#k / ev#k / opt/label: the pairing key with its mark
	Text  string
	Kind  string // the reserved word, "fact", or "text"
}

// transcriptMessage is one stored message as the transcript shows it: the body's lines as
// history shows them (package textline: a character that could end a line elsewhere, stored
// before the line rules, is shown escaped), its notes, and the token count the server stored
// for it when it was posted.
func transcriptMessage(sm *parley.Message) *message {
	t := sm.Time.UTC()
	m := &message{
		Seq: sm.Seq, Seat: sm.Seat, Tokens: sm.Tokens,
		Time:     t.Format(textline.TimeFormat),
		DateTime: t.Format(time.RFC3339),
		Long:     t.Format(longFormat),
	}
	var buf []byte
	for _, n := range sm.Notes {
		buf = textline.AppendNote(buf[:0], n)
		text := strings.TrimPrefix(string(buf), "! ")
		m.Notes = append(m.Notes, note{Text: text, Verdict: verdictClass(text)})
	}
	body := strings.TrimRight(string(textline.AppendBody(nil, sm.Body)), "\n")
	if convention.Looks(body) {
		cm, _ := convention.Parse(body)
		m.Convention = true
		m.Intent, m.Topic, m.To, m.Re = cm.Header.Intent, cm.Header.Topic, cm.Header.To, cm.Header.Re
		for _, l := range cm.Lines {
			ln := line{Label: l.Word, Text: l.Text, Kind: "fact"}
			if l.Reserved {
				ln.Kind = l.Word
			}
			if l.Key != "" {
				ln.Key = l.Mark + l.Key
			}
			m.Lines = append(m.Lines, ln)
		}
		return m
	}
	for _, l := range strings.Split(body, "\n") {
		m.Lines = append(m.Lines, line{Text: l, Kind: "text"})
	}
	return m
}

// eventBatch is how many messages the live stream reads from the store at a time.
const eventBatch = 100

// events streams a room's new messages to the room page's script as Server-Sent Events,
// authenticated by the session cookie. Each event is one message, already rendered by the
// same template as the page, so escaping happens in one place (html/template) and the
// script only inserts it:
//
//	id: <seq>
//	event: message
//	data: <li …>…</li>
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	u, err := h.current(r)
	if err != nil {
		h.fail(w, r, nil, err)
		return
	}
	if u == nil {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	room := r.PathValue("room")
	cursor, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			cursor = n
		}
	}
	cursor = max(cursor, 0)
	// Held: the signed-in token's revocation or rotation ends the stream at once, and nothing
	// posted after it is sent (RoomService.Hold).
	ctx, cancel, err := h.svc.Hold(r.Context(), u.caller)
	if err != nil {
		if parley.ErrorCode(err) == parley.EUNAUTHORIZED {
			h.endSession(u.sid)
		}
		h.fail(w, r, u, err)
		return
	}
	defer cancel()
	// Subscribe before reading, so a post between the read and the wait still wakes us.
	// Watch as the signed-in caller also checks that it may see the room.
	wake, err := h.svc.Watch(ctx, u.caller, room)
	if err != nil {
		http.Error(w, parley.ErrorMessage(err), statusOf[parley.ErrorCode(err)])
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	sw := sse.NewWriter(ctx, w)
	defer sw.Close()
	// However the loop below ends (a failed send included), a revocation signs the browser
	// out and says why.
	defer func() {
		if sw.FarewellIfEnded(ctx) {
			h.endSession(u.sid)
		}
	}()
	send := sw.Send
	if !send([]byte("retry: 3000\n\n")) {
		return
	}
	tick := time.NewTicker(h.opts.Heartbeat)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		// One store read per batch, one event per message.
		msgs, last, err := h.svc.Messages(ctx, u.caller, room, cursor, eventBatch, parley.CountRead)
		if parley.ErrorCode(err) == parley.EUNAUTHORIZED {
			h.endSession(u.sid)
			sw.Farewell(err)
			return
		}
		if err != nil {
			if ctx.Err() == nil {
				h.log.Error("web: event stream read", "room", room, "err", err)
			}
			return
		}
		for _, sm := range msgs {
			if sm.Seq <= cursor {
				continue
			}
			buf.Reset()
			if err := h.msgTpl.ExecuteTemplate(&buf, "message", transcriptMessage(sm)); err != nil {
				h.log.Error("web: render message", "err", err)
				return
			}
			if !send(sseEvent(sm.Seq, buf.Bytes())) {
				return
			}
			cursor = sm.Seq
		}
		if len(msgs) > 0 && cursor < last {
			continue // more to catch up on
		}
		select {
		case <-ctx.Done():
			return // the deferred FarewellIfEnded signs out and says why, when a revocation ended it
		case <-h.opts.Done:
			return
		case _, ok := <-wake:
			if !ok {
				return
			}
		case <-tick.C:
			if !send([]byte(": ping\n\n")) {
				return
			}
		}
		// A session signed out or a token revoked ends the stream. A revocation that the hold
		// has not heard of yet (on PostgreSQL its notification may trail the post that woke
		// us) still gets its farewell: a read under the hold confirms the token and says why.
		if u2, err := h.current(r); err != nil || u2 == nil {
			if _, _, err := h.svc.Messages(ctx, u.caller, room, cursor, 1, parley.NoCount); parley.ErrorCode(err) == parley.EUNAUTHORIZED {
				sw.Farewell(err)
			}
			return
		}
	}
}

func sseEvent(seq int64, html []byte) []byte {
	var b bytes.Buffer
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(seq, 10))
	b.WriteString("\nevent: message\n")
	// SSE also ends a line at a lone CR, which message text may hold; as a character
	// reference it is the same HTML and cannot start a field of its own.
	html = bytes.ReplaceAll(html, []byte("\r"), []byte("&#13;"))
	for _, l := range bytes.Split(bytes.TrimRight(html, "\n"), []byte("\n")) {
		b.WriteString("data: ")
		b.Write(l)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}
