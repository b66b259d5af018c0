package http

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
)

// streamWriter writes an event stream held by RoomService.Hold. Each write has writeWait to
// complete; the end of the hold (a revocation or rotation, the client leaving) interrupts a
// write in progress at once and refuses later ones, so that a client that stopped reading
// cannot keep a revoked token's stream open until the write deadline.
type streamWriter struct {
	ctx  context.Context
	w    http.ResponseWriter
	rc   *http.ResponseController
	mu   sync.Mutex // orders deadline changes: a send's, and the interruption's
	stop func() bool
	done bool // set under mu once the handler is finishing: no interruption after that
}

func newStreamWriter(ctx context.Context, w http.ResponseWriter) *streamWriter {
	sw := &streamWriter{ctx: ctx, w: w, rc: http.NewResponseController(w)}
	sw.stop = context.AfterFunc(ctx, func() {
		sw.mu.Lock()
		defer sw.mu.Unlock()
		if !sw.done {
			_ = sw.rc.SetWriteDeadline(time.Now())
		}
	})
	return sw
}

// send writes and flushes b; false when the stream is over.
func (sw *streamWriter) send(b []byte) bool {
	sw.mu.Lock()
	if sw.ctx.Err() != nil {
		sw.mu.Unlock()
		return false
	}
	_ = sw.rc.SetWriteDeadline(time.Now().Add(writeWait))
	sw.mu.Unlock()
	if _, err := sw.w.Write(b); err != nil {
		return false
	}
	return sw.rc.Flush() == nil
}

// farewell ends a stream whose token stopped working (err is EUNAUTHORIZED) with a comment
// line saying why, for a person reading the raw stream; programs learn it from the 401 of
// their reconnect. It gives the write a second at most.
func (sw *streamWriter) farewell(err error) {
	if parley.ErrorCode(err) != parley.EUNAUTHORIZED {
		return
	}
	sw.mu.Lock()
	sw.done = true
	_ = sw.rc.SetWriteDeadline(time.Now().Add(time.Second))
	sw.mu.Unlock()
	if _, err := sw.w.Write([]byte(": " + strings.ReplaceAll(parley.ErrorMessage(err), "\n", " ") + "\n\n")); err == nil {
		_ = sw.rc.Flush()
	}
}

// close stops watching the hold and clears the write deadline, which would otherwise pass
// on to the next request on a kept-alive connection.
func (sw *streamWriter) close() {
	sw.stop()
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.done = true
	_ = sw.rc.SetWriteDeadline(time.Time{})
}
