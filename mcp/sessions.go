package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parleyhq/parley"
)

// DefaultMaxSessions is how many MCP sessions one seat may hold at once unless MaxSessions
// says otherwise. An agent needs one; a few more cover restarts and parallel clients.
const DefaultMaxSessions = 16

// DefaultSessionTimeout closes an MCP session after this long without a request. Long,
// because an agent may sit idle for hours between turns and a new session reads from the
// start again; the per-seat bound, not the timeout, is what keeps sessions few.
const DefaultSessionTimeout = 12 * time.Hour

// revokeGrace is how long a revoked seat's session waits for its calls in flight (a waiting
// read, which the revocation ends at once) to answer before it is closed: the SDK client
// fails its pending calls when the session goes, and an answer saying why is better.
const revokeGrace = 250 * time.Millisecond

// MaxSessions bounds the MCP sessions one seat holds at once (default 16). A seat that opens
// one more has its least recently used idle session closed (later requests on it get the
// SDK's 404 "session not found", which tells a client to start a new one); when every one of
// them has a call in flight, the new session is refused instead.
func MaxSessions(n int) Option {
	return func(c *handlerConfig) { c.maxSessions = n }
}

// sessions tracks the MCP sessions by seat: it bounds how many one seat holds, and holds each
// one (RoomService.Hold) so that revoking or rotating the token that opened it closes it at
// once, its standing stream with it.
type sessions struct {
	svc   parley.RoomService
	log   *slog.Logger
	max   int
	ended func(id string) // told when a session ends, to forget what belongs to it

	mu     sync.Mutex
	byID   map[string]*session
	bySeat map[string]map[*session]struct{}
	posts  map[string]int // session id -> HTTP POSTs on it not yet answered
}

// session is one MCP session as sessions tracks it.
type session struct {
	id      string
	seat    string // room/name
	ss      *sdk.ServerSession
	last    time.Time // start of its latest request
	busy    int       // requests in flight
	closing bool      // being closed: no longer counted, and its requests are refused
}

func newSessions(svc parley.RoomService, log *slog.Logger, max int, ended func(string)) *sessions {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessions{svc: svc, log: log, max: max, ended: ended,
		byID: map[string]*session{}, bySeat: map[string]map[*session]struct{}{}, posts: map[string]int{}}
}

// middleware sees every request of every session: the first one of a session admits it
// (within the seat's bound), and each one marks it busy while it runs.
func (r *sessions) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ss, _ := req.GetSession().(*sdk.ServerSession)
		if ss == nil || ss.ID() == "" {
			return next(ctx, method, req)
		}
		if method != "initialize" && ss.InitializeParams() == nil {
			// Not a session yet (a client probing with server/discover, say): the SDK
			// closes it after this request unless the request made it one, as a
			// sessionless-protocol request can. Then it counts like any other.
			res, err := next(ctx, method, req)
			if ss.InitializeParams() != nil {
				r.admit(ss, req.GetExtra())
			}
			return res, err
		}
		s, err := r.admit(ss, req.GetExtra())
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		s.busy++
		s.last = time.Now()
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			s.busy--
			r.mu.Unlock()
		}()
		return next(ctx, method, req)
	}
}

// admit returns the tracked session of ss, tracking it first if it is new: within its seat's
// bound, closing the seat's least recently used idle session to make room, and held so that
// the end of its token closes it.
func (r *sessions) admit(ss *sdk.ServerSession, extra *sdk.RequestExtra) (*session, error) {
	r.mu.Lock()
	if s := r.byID[ss.ID()]; s != nil {
		r.mu.Unlock()
		if s.closing {
			return nil, fmt.Errorf("this MCP session is closing (hint: start a new session)")
		}
		return s, nil
	}
	var c *parley.Caller
	if extra != nil && extra.TokenInfo != nil {
		c, _ = extra.TokenInfo.Extra[callerKey].(*parley.Caller)
	}
	s := &session{id: ss.ID(), ss: ss, last: time.Now()}
	r.byID[s.id] = s
	sctx, ended := context.WithCancel(context.Background())
	go func() {
		ss.Wait()
		ended()
		r.forget(s)
	}()
	if c == nil || c.Seat == nil {
		s.closing = true
		r.mu.Unlock()
		go ss.Close()
		return nil, fmt.Errorf("unauthorized: no seat on this request")
	}
	s.seat = c.Seat.Room + "/" + c.Seat.Name
	set := r.bySeat[s.seat]
	var evict *session
	if len(set) >= r.max {
		for o := range set {
			if o.busy == 0 && (evict == nil || o.last.Before(evict.last)) {
				evict = o
			}
		}
		if evict == nil {
			s.closing = true
			r.mu.Unlock()
			go ss.Close()
			return nil, fmt.Errorf("too many MCP sessions: seat %s holds %d, each with a call in flight (hint: end a session you no longer use with an HTTP DELETE, or wait for a call to finish)", s.seat, len(set))
		}
		r.closeLocked(evict)
	}
	if set == nil {
		set = map[*session]struct{}{}
		r.bySeat[s.seat] = set
	}
	set[s] = struct{}{}
	r.mu.Unlock()
	if evict != nil {
		r.log.Info("mcp: closing the least recently used session of a seat at its bound", "seat", s.seat, "max", r.max)
		go evict.ss.Close()
	}

	// Held for as long as the session lives: the end of the token that opened it closes it.
	hctx, release, err := r.svc.Hold(sctx, c)
	if err != nil {
		r.mu.Lock()
		r.closeLocked(s)
		r.mu.Unlock()
		go ss.Close()
		return nil, err
	}
	context.AfterFunc(sctx, release)
	context.AfterFunc(hctx, func() {
		if parley.ErrorCode(context.Cause(hctx)) == parley.EUNAUTHORIZED {
			r.revoked(s)
		}
	})
	return s, nil
}

// revoked closes a session whose token stopped working, once its calls in flight have
// answered or revokeGrace has passed.
func (r *sessions) revoked(s *session) {
	r.mu.Lock()
	r.closeLocked(s)
	r.mu.Unlock()
	deadline := time.Now().Add(revokeGrace)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		// A call's handler returning is not its answer written: the HTTP POST that carries
		// it must have ended too, or closing the session cuts the answer off.
		busy := s.busy + r.posts[s.id]
		r.mu.Unlock()
		if busy == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.ss.Close()
}

// postStarted and postEnded bracket an HTTP POST on the session id (a call and its answer),
// so that a revoked session is closed only after the answers in flight were written.
func (r *sessions) postStarted(id string) {
	r.mu.Lock()
	r.posts[id]++
	r.mu.Unlock()
}

func (r *sessions) postEnded(id string) {
	r.mu.Lock()
	if r.posts[id]--; r.posts[id] <= 0 {
		delete(r.posts, id)
	}
	r.mu.Unlock()
}

// closeLocked marks s as closing: it no longer counts against its seat's bound, and its
// requests are refused until the SDK has closed it.
func (r *sessions) closeLocked(s *session) {
	s.closing = true
	if set := r.bySeat[s.seat]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(r.bySeat, s.seat)
		}
	}
}

// forget drops a session the SDK has closed (by the client, idle timeout, eviction or
// revocation).
func (r *sessions) forget(s *session) {
	r.mu.Lock()
	r.closeLocked(s)
	if r.byID[s.id] == s {
		delete(r.byID, s.id)
	}
	r.mu.Unlock()
	if r.ended != nil {
		r.ended(s.id)
	}
}

// count returns how many sessions a seat (room/name) holds.
func (r *sessions) count(seat string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bySeat[seat])
}
