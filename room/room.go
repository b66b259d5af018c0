// Package room is the room server's behaviour: the parley.RoomService that every edge (HTTP,
// MCP, the web UI, the CLI through HTTP) calls. It owns the post pipeline, the byte-stable
// history, inboxes, the asks scheduler, state records and stats; it keeps nothing durable
// itself (that is the parley.Store's job). The rate buckets live in the store when it shares
// them between processes (parley.RateStore) and in memory otherwise.
//
// The post pipeline runs, in order: the sender is the token's seat → the message rate caps
// (every post counts, refused ones too) → size and UTF-8 limits → idempotency key → format
// and validation (convention or AACP; plain text only in lenient rooms) → addressing against
// the roster → dedup → the acknowledgement cap → secret scan → the token cap → evidence →
// append. Every refusal is a *parley.Error whose Message says what is
// wrong and whose Hint says how to fix it. The answers are those of this order; the message
// caps are taken later when they can be, with the tokens (limits.go).
//
// History is append-only and byte-stable: each message renders as
//
//	#<seq> <seat> <time>
//	<body as posted, lines ended by LF (CRLF shown as LF), a newline added if it lacked one>
//	! <note frozen at post time>
//	<blank line>
//
// The lines are package textline's, the one definition every edge uses: a body may end a
// line only with LF or CRLF and may hold no line that passes for a header or a note, and a
// body stored before those rules is shown with the offending characters escaped as [U+XXXX]
// (textline.AppendBody), so that it too stays one message without a forged note.
// History(after=N) is exactly the suffix of the full text and every reader of a range
// gets identical bytes, which is what lets provider prompt caches hit.
//
// Locks: the Service holds six small mutexes (rate limiters, the seats seen over a cap, read marks, counters, the block
// token cache, the page cache). None is held while another is taken or while the store is called, so there is
// no lock order to keep.
package room

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/evidence"
	"github.com/parleyhq/parley/internal/lazyre"
)

// Config configures a Service.
type Config struct {
	AdminToken string           // the server admin's bearer token (plain; compared by SHA-256 in constant time)
	AdminHash  []byte           // or only its SHA-256, when the plain token is not kept (AdminToken wins)
	GitRepo    string           // repository for `ev commit` checks; "" = commit evidence stays unverified
	Now        func() time.Time // nil = time.Now; tests inject a clock
	Random     io.Reader        // nil = crypto/rand; seat tokens
	Logger     *slog.Logger     // nil = slog.Default()
	// HistoryCacheBytes is the budget of the cache of full history pages (pagecache.go):
	// 0 = DefaultHistoryCacheBytes, negative = no cache.
	HistoryCacheBytes int64
	// Observer hears lapses, evidence verdicts, refusals and store append times (nil = none);
	// `parley serve` passes its Prometheus registry (package internal/metrics).
	Observer Observer
}

// Service implements parley.RoomService on a parley.Store.
type Service struct {
	store    parley.Store
	now      func() time.Time
	random   io.Reader
	log      *slog.Logger
	admin    [sha256.Size]byte // SHA-256 of the admin token
	hasAdmin bool
	adminTok string // kept only to recognise it in the secret scan
	tok      *bpe.Encoding
	ev       *evidence.Resolver
	limits   limits
	reads    readMarks
	stats    statBuf
	roster   roster // cached room policy and active seats, for posts
	blocks   blockTokens
	pages    pageCache     // full history pages, which never change
	wake     chan struct{} // nudges the scheduler after a post opens an ask with a time
	holds    holds         // long-lived requests by seat, ended with their token (hold.go)
	obs      Observer      // never nil
	coming   postsComing   // the store, if it hears of posts on their way to Append; else nil
}

// postsComing is a store that shares commits among appends (sqlite's committer, postgres's
// room batches) and can hold one for posts it is told are on their way (PostsComing): delta 1
// announces a post to room that passed authentication, -1 withdraws it when it is refused or
// about to append.
type postsComing interface {
	PostsComing(room string, delta int)
}

var _ parley.RoomService = (*Service)(nil)

// New returns a Service on store.
func New(store parley.Store, cfg Config) (*Service, error) {
	if store == nil {
		return nil, fmt.Errorf("room: no store")
	}
	tok, err := bpe.Get("o200k_base")
	if err != nil {
		return nil, fmt.Errorf("room: tokenizer: %w", err)
	}
	s := &Service{
		store:  store,
		now:    cfg.Now,
		random: cfg.Random,
		log:    cfg.Logger,
		tok:    tok,
		wake:   make(chan struct{}, 1),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.random == nil {
		s.random = rand.Reader
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.obs = cfg.Observer
	if s.obs == nil {
		s.obs = noObserver{}
	}
	if cfg.AdminToken != "" {
		s.admin = sha256.Sum256([]byte(cfg.AdminToken))
		s.hasAdmin = true
		s.adminTok = cfg.AdminToken
	} else if len(cfg.AdminHash) == sha256.Size {
		// Known by hash only: the secret scan recognises it among the strings of a seat
		// token's shape, which is the shape `parley serve` gives the tokens it creates.
		copy(s.admin[:], cfg.AdminHash)
		s.hasAdmin = true
	}
	s.coming, _ = store.(postsComing)
	s.ev = &evidence.Resolver{GitRepo: cfg.GitRepo, Runs: store, Logger: s.log}
	s.limits.init(store)
	s.reads.m = map[readKey]readMark{}
	s.blocks.m = map[blockKey]int{}
	switch {
	case cfg.HistoryCacheBytes == 0:
		s.pages.init(DefaultHistoryCacheBytes)
	case cfg.HistoryCacheBytes > 0:
		s.pages.init(cfg.HistoryCacheBytes)
	}
	return s, nil
}

// TokenPrefix starts every seat token, so that the secret scan (ours and anyone else's) can
// recognise one.
const TokenPrefix = "pk_"

// tokenPattern matches a seat token: the prefix and 32 random bytes in unpadded base64url.
var tokenPattern = lazyre.New(`\bpk_[A-Za-z0-9_-]{43}\b`)

// newToken returns a fresh seat token and its hash.
func (s *Service) newToken() (string, []byte, error) {
	var b [32]byte
	if _, err := io.ReadFull(s.random, b[:]); err != nil {
		return "", nil, fmt.Errorf("seat token: %w", err)
	}
	tok := TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	h := sha256.Sum256([]byte(tok))
	return tok, h[:], nil
}

// Authenticate maps a bearer token to its caller.
func (s *Service) Authenticate(ctx context.Context, token string) (*parley.Caller, error) {
	if token == "" {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "no token").
			WithHint("send Authorization: Bearer <seat token>")
	}
	var buf [64]byte // a seat token fits: hashed without a copy on the heap
	h := sha256.Sum256(append(buf[:0], token...))
	if s.hasAdmin && subtle.ConstantTimeCompare(h[:], s.admin[:]) == 1 {
		return &parley.Caller{Admin: true}, nil
	}
	if !strings.HasPrefix(token, TokenPrefix) {
		return nil, badToken()
	}
	seat, err := s.store.SeatByToken(ctx, h[:])
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return nil, badToken()
	}
	if err != nil {
		return nil, s.internal(ctx, "authenticate", err)
	}
	// The store found the row by hash; compare again in constant time so that a store that
	// matches loosely can never let a different token through.
	if subtle.ConstantTimeCompare(seat.TokenHash, h[:]) != 1 || !seat.Active() {
		return nil, badToken()
	}
	return &parley.Caller{Seat: seat}, nil
}

// badToken is Authenticate's refusal of a token it does not know, made only when it refuses
// (every request authenticates, and most get through).
func badToken() error {
	return parley.Errorf(parley.EUNAUTHORIZED, "unknown or revoked token").
		WithHint("ask the room's admin for a seat token; tokens are shown once, at creation or rotation")
}

// internal logs err and returns it wrapped, so edges show "internal error" and the log has the
// detail. Errors that are already *parley.Error pass through unchanged.
func (s *Service) internal(ctx context.Context, op string, err error) error {
	if code := parley.ErrorCode(err); code != parley.EINTERNAL {
		return err
	}
	if ctx.Err() != nil {
		// The request ended while the store worked. When a hold ended it (the token was revoked
		// or rotated), the caller is owed that reason, not an internal error; a client that
		// went away is no fault of ours to log.
		var pe *parley.Error
		if cause := context.Cause(ctx); errors.As(cause, &pe) {
			return pe
		}
		s.log.DebugContext(ctx, "room: "+op+": the request ended", "err", err)
		return fmt.Errorf("%s: %w", op, err)
	}
	if d, ok := s.store.(parley.StorageFullDetector); ok && d.StorageFull(err) {
		s.log.ErrorContext(ctx, "room: "+op+": storage full", "err", err)
		return parley.StorageFull()
	}
	s.log.ErrorContext(ctx, "room: "+op, "err", err)
	return fmt.Errorf("%s: %w", op, err)
}

var (
	roomName = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	seatName = lazyre.New(`^[a-z0-9][a-z0-9._-]{0,31}$`)
)

// seatIn returns the caller's seat when it sits in room.
func seatIn(c *parley.Caller, room string) (*parley.Seat, error) {
	if c == nil {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "no caller")
	}
	if c.Seat == nil {
		return nil, parley.Errorf(parley.EFORBIDDEN, "the server admin has no seat in room %s", room).
			WithHint("add a seat for yourself (role admin) and use its token")
	}
	if c.Seat.Room != room {
		return nil, parley.Errorf(parley.EFORBIDDEN, "your seat %s sits in room %s, not %s", c.Seat.Name, c.Seat.Room, room).
			WithHint("use a token of a seat in room %s", room)
	}
	return c.Seat, nil
}

// canSee allows the server admin and any seat of the room.
func canSee(c *parley.Caller, room string) error {
	if c != nil && c.Admin {
		return nil
	}
	_, err := seatIn(c, room)
	return err
}

// canManage allows the server admin and the room's admin seats.
func canManage(c *parley.Caller, room string) error {
	if c != nil && c.Admin {
		return nil
	}
	seat, err := seatIn(c, room)
	if err != nil {
		return err
	}
	if seat.Role != parley.RoleAdmin {
		return parley.Errorf(parley.EFORBIDDEN, "seat %s is a %s; managing room %s takes an admin seat", seat.Name, seat.Role, room)
	}
	return nil
}

// CreateRoom creates a room (server admin only).
func (s *Service) CreateRoom(ctx context.Context, c *parley.Caller, name string, p *parley.Policy) (*parley.Room, error) {
	if c == nil || !c.Admin {
		return nil, parley.Errorf(parley.EFORBIDDEN, "only the server admin creates rooms")
	}
	if !roomName.MatchString(name) {
		return nil, parley.Errorf(parley.EINVALID, "room name %q is not a legible word", name).
			WithHint("use lower-case letters, digits, '-' and '_', starting with a letter or digit, e.g. limiter")
	}
	pol := parley.DefaultPolicy()
	if p != nil {
		pol = p.WithDefaults()
	}
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	r := &parley.Room{Name: name, Policy: pol, CreatedAt: s.now().UTC()}
	if err := s.store.CreateRoom(ctx, r); err != nil {
		if parley.ErrorCode(err) == parley.ECONFLICT {
			return nil, parley.Errorf(parley.ECONFLICT, "room %s exists", name).WithHint("pick another name")
		}
		return nil, s.internal(ctx, "create room", err)
	}
	return r, nil
}

// UpdatePolicy merges the fields set in a JSON patch into the room's policy.
func (s *Service) UpdatePolicy(ctx context.Context, c *parley.Caller, room string, patch []byte) (*parley.Room, error) {
	if err := canManage(c, room); err != nil {
		return nil, err
	}
	r, err := s.room(ctx, room)
	if err != nil {
		return nil, err
	}
	p := r.Policy
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, parley.Errorf(parley.EINVALID, "policy patch: %v", err).
			WithHint(`send a JSON object with the fields to change, e.g. {"format":"lenient","seat_messages_per_minute":10}`)
	}
	p = p.WithDefaults()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	defer s.forgetRoster(room)
	if err := s.store.UpdatePolicy(ctx, room, p); err != nil {
		return nil, s.internal(ctx, "update policy", err)
	}
	r.Policy = p
	s.limits.forget(room) // new rates apply from the next post
	return r, nil
}

// room loads a room, with a precise ENOTFOUND.
func (s *Service) room(ctx context.Context, name string) (*parley.Room, error) {
	r, err := s.store.Room(ctx, name)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return nil, parley.Errorf(parley.ENOTFOUND, "no room %s", name)
	}
	if err != nil {
		return nil, s.internal(ctx, "room", err)
	}
	r.Policy = r.Policy.WithDefaults()
	return r, nil
}

// Room returns a room the caller may see.
func (s *Service) Room(ctx context.Context, c *parley.Caller, room string) (*parley.Room, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	return s.room(ctx, room)
}

// Rooms lists every room for the admin, and its own for a seat.
func (s *Service) Rooms(ctx context.Context, c *parley.Caller) ([]*parley.Room, error) {
	if c == nil {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "no caller")
	}
	if c.Admin {
		rooms, err := s.store.Rooms(ctx)
		if err != nil {
			return nil, s.internal(ctx, "rooms", err)
		}
		return rooms, nil
	}
	if c.Seat == nil {
		return nil, parley.Errorf(parley.EUNAUTHORIZED, "no caller")
	}
	r, err := s.room(ctx, c.Seat.Room)
	if err != nil {
		return nil, err
	}
	return []*parley.Room{r}, nil
}

// AddSeat creates a seat and returns its token, which is shown only here.
func (s *Service) AddSeat(ctx context.Context, c *parley.Caller, room, name string, role parley.Role) (*parley.Seat, string, error) {
	if err := canManage(c, room); err != nil {
		return nil, "", err
	}
	switch {
	case !seatName.MatchString(name):
		return nil, "", parley.Errorf(parley.EINVALID, "seat name %q is not a legible word", name).
			WithHint("use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 32, e.g. builder")
	case name == "all" || name == parley.SystemSeat:
		return nil, "", parley.Errorf(parley.EINVALID, "seat name %q is reserved", name).
			WithHint("`all` addresses every seat and `%s` is the server itself; pick another name", parley.SystemSeat)
	case !role.Valid():
		return nil, "", parley.Errorf(parley.EINVALID, "role %q is not agent, human, runner or admin", role)
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, "", err
	}
	tok, hash, err := s.newToken()
	if err != nil {
		return nil, "", s.internal(ctx, "add seat", err)
	}
	seat := &parley.Seat{Room: room, Name: name, Role: role, TokenHash: hash, CreatedAt: s.now().UTC()}
	defer s.forgetRoster(room)
	if err := s.store.CreateSeat(ctx, seat); err != nil {
		switch parley.ErrorCode(err) {
		case parley.ECONFLICT:
			return nil, "", parley.Errorf(parley.ECONFLICT, "seat %s exists in room %s", name, room).
				WithHint("seat names stay taken after revocation; pick another, or rotate the seat's token")
		case parley.ENOTFOUND:
			return nil, "", parley.Errorf(parley.ENOTFOUND, "no room %s", room)
		}
		return nil, "", s.internal(ctx, "add seat", err)
	}
	return seat, tok, nil
}

// Seats lists a room's seats, revoked ones included.
func (s *Service) Seats(ctx context.Context, c *parley.Caller, room string) ([]*parley.Seat, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	seats, err := s.store.Seats(ctx, room)
	if err != nil {
		return nil, s.internal(ctx, "seats", err)
	}
	return seats, nil
}

// RevokeSeat revokes a seat's token for good.
func (s *Service) RevokeSeat(ctx context.Context, c *parley.Caller, room, name string) error {
	if err := canManage(c, room); err != nil {
		return err
	}
	defer s.forgetRoster(room)
	err := s.store.RevokeSeat(ctx, room, name, s.now().UTC())
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return parley.Errorf(parley.ENOTFOUND, "no seat %s in room %s", name, room)
	}
	if err != nil {
		return s.internal(ctx, "revoke seat", err)
	}
	s.endHolds(ctx, room, name)
	return nil
}

// RotateSeat gives a seat a new token; the old one stops working at once.
func (s *Service) RotateSeat(ctx context.Context, c *parley.Caller, room, name string) (string, error) {
	if err := canManage(c, room); err != nil {
		return "", err
	}
	seat, err := s.store.Seat(ctx, room, name)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return "", parley.Errorf(parley.ENOTFOUND, "no seat %s in room %s", name, room)
	}
	if err != nil {
		return "", s.internal(ctx, "rotate seat", err)
	}
	if !seat.Active() {
		return "", parley.Errorf(parley.EINVALID, "seat %s is revoked", name).
			WithHint("revocation is for good; add a new seat")
	}
	tok, hash, err := s.newToken()
	if err != nil {
		return "", s.internal(ctx, "rotate seat", err)
	}
	defer s.forgetRoster(room)
	if err := s.store.SetSeatToken(ctx, room, name, hash); err != nil {
		return "", s.internal(ctx, "rotate seat", err)
	}
	s.endHolds(ctx, room, name)
	return tok, nil
}

// Watch wakes with the room's last seq after each append.
func (s *Service) Watch(ctx context.Context, c *parley.Caller, room string) (<-chan int64, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	return s.store.Watch(ctx, room), nil
}

// readMarks remembers, per reader, where its last history read started and ended: the basis
// of the prompt-cache projection (see Stats).
type readMarks struct {
	mu sync.Mutex
	m  map[readKey]readMark
}

type readKey struct{ room, seat string }

type readMark struct{ after, last int64 }
