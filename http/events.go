package http

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sse"
	"github.com/parleyhq/parley/internal/textline"
)

// handleEvents streams a room's messages as Server-Sent Events, one event per message:
//
//	id: <seq>
//	event: message
//	data: <first line of the message's history text>
//	data: <next line …>
//
// The event's data plus one "\n" is exactly that message's history text (SSE drops the
// final newline), so a follower can rebuild the same bytes as GET …/history: the lines are
// package textline's, as in history, which holds no CR, NEL, U+2028 or U+2029 that an SSE
// parser or a terminal could take for a line end. The stream
// starts after ?after=N, or after the Last-Event-ID a reconnecting client sends, and carries
// a comment line every heartbeat while idle. Appends on this or (PostgreSQL) any other
// instance wake it through RoomService.Watch. It reads the stored messages a batch at a time
// (RoomService.Messages, one store read per batch, counted as the seat's read) and renders
// each with textline.AppendMessage, the rendering history uses.
//
// The stream is held (RoomService.Hold): when its token is revoked or rotated, on this or any
// other instance on the same database, it ends at once with a comment line saying why, and no
// message posted after the revocation is sent on it.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	room := r.PathValue("room")
	cursor, err := queryInt64(r, "after", 0)
	if err != nil {
		return err
	}
	if id := strings.TrimSpace(r.Header.Get("Last-Event-ID")); id != "" {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 {
			return badRequest("reconnect with the id of the last event received", "Last-Event-ID %q is not a seq", id)
		}
		cursor = n
	}

	ctx, cancel, err := s.svc.Hold(r.Context(), c)
	if err != nil {
		return err
	}
	defer cancel()
	// Subscribe before the first read, so that an append between the read and the wait
	// still wakes us. Watch also checks that the caller may read the room; its error is
	// still ours to send as JSON, before the stream starts.
	wake, err := s.svc.Watch(ctx, c, room)
	if err != nil {
		return err
	}
	// The first batch is read before the stream starts, so that its error is still sent as
	// JSON.
	batch, last, err := s.svc.Messages(ctx, c, room, cursor, eventBatch, parley.CountRead)
	if err != nil {
		return err
	}

	rc := http.NewResponseController(w)
	// The server's read deadline is for request bodies; left in place it would cancel this
	// long-lived request when it passed.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)

	sw := sse.NewWriter(ctx, w)
	defer sw.Close()
	// However the loop below ends (a failed send included), a revocation says why.
	defer sw.FarewellIfEnded(ctx)
	send := sw.Send
	if !send([]byte("retry: 3000\n\n")) {
		return nil
	}

	tick := time.NewTicker(s.heartbeat)
	defer tick.Stop()
	var text, event []byte
	read := false // whether batch is used up: the first is the one read above
	for {
		// Drain in batches, one store read each, and send one event per message: the
		// event boundaries are the message boundaries.
		for {
			if read {
				batch, last, err = s.svc.Messages(ctx, c, room, cursor, eventBatch, parley.CountRead)
				if parley.ErrorCode(err) == parley.EUNAUTHORIZED {
					sw.Farewell(err)
					return nil
				}
				if err != nil {
					if ctx.Err() == nil {
						s.log.Error("event stream read", "room", room, "after", cursor, "err", err)
					}
					return nil
				}
			}
			for _, m := range batch {
				if m.Seq <= cursor {
					continue
				}
				text = textline.AppendMessage(text[:0], m)
				event = appendEvent(event[:0], m.Seq, text)
				if !send(event) {
					return nil
				}
				cursor = m.Seq
			}
			read = true
			if len(batch) == 0 || cursor >= last {
				break
			}
		}
		select {
		case <-ctx.Done():
			return nil // the deferred FarewellIfEnded says why, when a revocation ended it
		case <-s.closing:
			return nil
		case _, ok := <-wake:
			if !ok {
				return nil
			}
		case <-tick.C:
			if !send([]byte(": ping\n\n")) {
				return nil
			}
		}
	}
}

// eventBatch is how many messages a stream reads from the store at a time.
const eventBatch = 100

// appendEvent appends one SSE message event for the history text of message seq, one data
// line per line of the text as textline.Split defines them: a character that would end an
// SSE line (a CR) never reaches the stream, even in text from an older server.
func appendEvent(b []byte, seq int64, text []byte) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\nevent: message\n"...)
	for _, line := range textline.Split(strings.TrimSuffix(string(text), "\n")) {
		b = append(b, "data: "...)
		b = append(b, line...)
		b = append(b, '\n')
	}
	return append(b, '\n')
}
