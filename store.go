package parley

import (
	"bytes"
	"context"
	"time"
)

// Room is a place where seats talk. Its name is a legible word, unique on the server.
type Room struct {
	Name      string    `json:"name"`
	Policy    Policy    `json:"policy"`
	CreatedAt time.Time `json:"created_at"`
}

// Seat is a named participant of one room. Its token is shown once, at creation or rotation;
// only its SHA-256 is stored.
type Seat struct {
	Room      string     `json:"room"`
	Name      string     `json:"name"`
	Role      Role       `json:"role"`
	TokenHash []byte     `json:"-"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Active reports whether the seat has not been revoked.
func (s *Seat) Active() bool { return s.RevokedAt == nil }

// Message is one post, as stored. Body holds the bytes exactly as posted; Notes are the
// server's remarks frozen at post time (evidence verdicts, defaults applied), rendered after
// the body in history.
type Message struct {
	Room           string    `json:"room"`
	Seq            int64     `json:"seq"`
	Seat           string    `json:"seat"`
	Time           time.Time `json:"time"`
	Format         string    `json:"format"`
	Topic          string    `json:"topic,omitempty"`
	Intent         string    `json:"intent,omitempty"`
	Re             int64     `json:"re,omitempty"`
	Body           string    `json:"body"`
	Tokens         int       `json:"tokens"`
	Hash           []byte    `json:"-"` // SHA-256 of the normalised body, for dedup
	Notes          []string  `json:"notes,omitempty"`
	IdempotencyKey string    `json:"-"`
}

// Ask states.
const (
	AskOpen     = "open"
	AskAnswered = "answered"
	AskLapsed   = "lapsed"
)

// Ask is an `ask` line of a message addressed to a seat: open until the addressee posts with
// `re <seq>`, or until Due passes, when the server posts the default (or says it lapsed).
type Ask struct {
	Room     string     `json:"room"`
	Seq      int64      `json:"seq"`  // the message that asks
	Line     int        `json:"line"` // 1-based line of the ask within the message
	From     string     `json:"from"`
	To       string     `json:"to"`
	Topic    string     `json:"topic,omitempty"`
	Text     string     `json:"text"`
	Due      *time.Time `json:"due,omitempty"` // nil: no time was given (any time, 00010101T0000Z included, is a time)
	Default  string     `json:"default,omitempty"`
	Decider  string     `json:"decider,omitempty"`
	State    string     `json:"state"`
	ClosedBy int64      `json:"closed_by,omitempty"` // seq of the answer or of the lapse message
}

// Run is a test-run record posted by a runner seat; `ev run <id>` resolves against it.
type Run struct {
	Room   string    `json:"room"`
	ID     string    `json:"id"`
	Commit string    `json:"commit,omitempty"`
	Passed int       `json:"passed"`
	Failed int       `json:"failed"`
	Seat   string    `json:"seat"`
	Time   time.Time `json:"time"`
}

// Append is one post as the pipeline hands it to the store: the message and the projections
// to update with it, in one transaction.
type Append struct {
	Message *Message
	// Asks opened by this message (Seq is filled in by the store).
	Asks []*Ask
	// Answers lists the seqs of messages whose open asks addressed to the sender this
	// message answers (from `re <seq>`).
	Answers []int64
	// Lapses, when set, is the ask this system message closes as lapsed; the append fails
	// with ECONFLICT if that ask is no longer open (another instance got there first).
	Lapses *Ask
	// Dedup: refuse with ECONFLICT (Fields["seq"] = the original) when the same seat posted a
	// message with the same Hash after DedupSince or among its last DedupLast messages.
	DedupSince time.Time
	DedupLast  int
	// Poster, when set, is the message's seat as the caller authenticated it: the store
	// refuses the append with PosterError's answer unless, in the append's own transaction,
	// the room still holds that seat unrevoked (and, when Poster.TokenHash is set, with that
	// token). The post path authenticates every request and leaves this last check of the
	// seat to the append, where a revocation or rotation that any process committed before it
	// is seen, without a read of its own.
	Poster *Seat
}

// PosterError is the refusal of a post by seat want, authenticated earlier, given the room's
// seat of that name now (cur, nil when the room has none): nil when cur is want's seat (want
// names this room, or none), unrevoked and, when want names a token hash, with that token.
func PosterError(room string, want, cur *Seat) error {
	switch {
	case cur == nil || (want.Room != "" && want.Room != room):
		return Errorf(EFORBIDDEN, "seat %s does not sit in room %s", want.Name, room)
	case !cur.Active():
		return Errorf(EFORBIDDEN, "seat %s was revoked", want.Name).
			WithHint("ask the room's admin for a new seat")
	case len(want.TokenHash) > 0 && !bytes.Equal(want.TokenHash, cur.TokenHash):
		return Errorf(EFORBIDDEN, "the token of seat %s was rotated", want.Name).
			WithHint("use the seat's new token")
	}
	return nil
}

// StatDelta is one counter's increment (Store.AddStat's arguments).
type StatDelta struct {
	Room, Seat, Key string
	Delta           int64
}

// StatsAdder is a store that writes many counters at once, in one round trip (PostgreSQL).
// AddStats is AddStat for each delta, all or none; the deltas name each counter once.
type StatsAdder interface {
	AddStats(ctx context.Context, deltas []StatDelta) error
}

// CommitStats is what a store's group commit has done since the store was opened: how many
// transactions it committed, how many writes they carried, and where its time went. It tells
// whether the committer is what bounds the posts per second (Busy near the wall time, and
// Commit most of Busy: the disk's fsync sets the pace).
type CommitStats struct {
	Commits int64         // transactions committed
	Writes  int64         // writes they carried (appends and counters)
	Busy    time.Duration // from taking a batch's first write to answering the batch, every batch
	Commit  time.Duration // in COMMIT: the log's writes and its fsync
}

// Since is what the committer did between before and c, two readings of one store.
func (c CommitStats) Since(before CommitStats) CommitStats {
	return CommitStats{Commits: c.Commits - before.Commits, Writes: c.Writes - before.Writes,
		Busy: c.Busy - before.Busy, Commit: c.Commit - before.Commit}
}

// Plus is c and d together (stats over two spells).
func (c CommitStats) Plus(d CommitStats) CommitStats {
	return CommitStats{Commits: c.Commits + d.Commits, Writes: c.Writes + d.Writes,
		Busy: c.Busy + d.Busy, Commit: c.Commit + d.Commit}
}

// CommitStatser is a store whose writes go through one committer that reports CommitStats
// (sqlite.Store). The bench reports them, and `parley serve` exports them on /metrics.
type CommitStatser interface {
	CommitStats() CommitStats
}

// Store persists everything the room server knows. sqlite.Store and postgres.Store implement
// it and pass the one conformance suite in storetest. Every method is safe for concurrent use,
// also by several server processes on one database where the implementation allows it.
type Store interface {
	// CreateRoom stores a new room. ECONFLICT if the name is taken.
	CreateRoom(ctx context.Context, r *Room) error
	// Room returns one room. ENOTFOUND if there is none.
	Room(ctx context.Context, name string) (*Room, error)
	// Rooms lists every room by name.
	Rooms(ctx context.Context) ([]*Room, error)
	// UpdatePolicy replaces a room's policy. ENOTFOUND.
	UpdatePolicy(ctx context.Context, room string, p Policy) error

	// CreateSeat stores a new seat. ENOTFOUND for the room, ECONFLICT if the name is taken
	// in that room (revoked seats keep their name).
	CreateSeat(ctx context.Context, s *Seat) error
	// Seat returns one seat, revoked or not. ENOTFOUND.
	Seat(ctx context.Context, room, name string) (*Seat, error)
	// SeatByToken returns the seat whose token hashes to hash, revoked or not. ENOTFOUND.
	SeatByToken(ctx context.Context, hash []byte) (*Seat, error)
	// Seats lists a room's seats by name, revoked ones included.
	Seats(ctx context.Context, room string) ([]*Seat, error)
	// RevokeSeat marks a seat revoked at t. ENOTFOUND.
	RevokeSeat(ctx context.Context, room, name string, t time.Time) error
	// SetSeatToken replaces a seat's token hash (rotation). ENOTFOUND.
	SetSeatToken(ctx context.Context, room, name string, hash []byte) error

	// Append stores a.Message with the next gapless seq of its room and updates asks, in one
	// transaction, and returns the stored message (Seq set). On an Idempotency-Key that the
	// same seat already used in the room it stores nothing and returns the original message
	// with Replay set: a normal result, not an error. On a duplicate (see Append.Dedup*) it
	// returns ECONFLICT with Fields["seq"]. ENOTFOUND for the room.
	Append(ctx context.Context, a *Append) (Appended, error)
	// Messages returns the room's messages with seq > after, in seq order, at most limit
	// of them (limit <= 0: all).
	Messages(ctx context.Context, room string, after int64, limit int) ([]*Message, error)
	// Message returns one message. ENOTFOUND.
	Message(ctx context.Context, room string, seq int64) (*Message, error)
	// LastSeq returns the room's highest seq, 0 when empty.
	LastSeq(ctx context.Context, room string) (int64, error)
	// ByIdempotencyKey returns the message a seat posted with key. ENOTFOUND.
	ByIdempotencyKey(ctx context.Context, room, seat, key string) (*Message, error)
	// Duplicate returns the seq of the seat's earlier message with this hash after since or
	// among its last n messages, or 0.
	Duplicate(ctx context.Context, room, seat string, hash []byte, since time.Time, n int) (int64, error)

	// TopicMessages returns the room's messages on topic with seq > after, in seq order, at
	// most limit of them (limit <= 0: all): what Messages returns, less every other topic's.
	// Its cost is that of the topic's messages, however many the room holds (an index on
	// room, topic and seq). Topic "" selects the messages without one.
	TopicMessages(ctx context.Context, room, topic string, after int64, limit int) ([]*Message, error)

	// Search returns up to limit of the room's messages whose body holds any of words, best
	// match first by the store's full-text rank (SQLite: FTS5's bm25; PostgreSQL: ts_rank),
	// equal ranks newest first. Words are plain words as fulltext.Words splits a query:
	// lower-case runs of letters and numbers; any other entry is ignored, so no word is ever
	// read as query syntax. No words, or limit <= 0: no messages. The index is kept in the
	// transaction that stores each message, by Append and ImportRoom alike.
	Search(ctx context.Context, room string, words []string, limit int) ([]*Message, error)

	// Asks returns the room's asks in the given state ("" for all), by seq and line.
	Asks(ctx context.Context, room, state string) ([]*Ask, error)
	// TopicAsks returns the room's asks on topic (Ask.Topic), in every state, by seq and
	// line: what Asks(room, "") returns, less every other topic's.
	TopicAsks(ctx context.Context, room, topic string) ([]*Ask, error)
	// DueAsks returns open asks, in every room, whose Due is set and not after t.
	DueAsks(ctx context.Context, t time.Time) ([]*Ask, error)
	// NextDue returns the earliest Due of any open ask, or the zero time.
	NextDue(ctx context.Context) (time.Time, error)

	// CreateRun stores a run record. ECONFLICT if the id exists in the room.
	CreateRun(ctx context.Context, r *Run) error
	// Run returns one run. ENOTFOUND.
	Run(ctx context.Context, room, id string) (*Run, error)
	// Runs lists a room's run records by time, then id.
	Runs(ctx context.Context, room string) ([]*Run, error)

	// ImportRoom writes a whole room, as an export holds it, in one transaction: the room,
	// its seats (their token hashes as given, usually none), its messages with their seqs,
	// times, tokens, notes and hashes as given, the asks with their states, the runs and the
	// counters; the room's next seq follows its highest message. ECONFLICT if the room
	// exists; EINVALID for an archive that does not hold together (a message out of seq
	// order, an ask of no message); nothing is written then.
	ImportRoom(ctx context.Context, a *RoomArchive) error

	// AddStat adds delta to a per-room, per-seat counter (for example "dedup_tokens",
	// "read_tokens").
	AddStat(ctx context.Context, room, seat, key string, delta int64) error
	// Stats returns every counter of a room as seat -> key -> value.
	Stats(ctx context.Context, room string) (map[string]map[string]int64, error)

	// Watch returns a channel that receives the room's new last seq after appends, by this
	// process or (postgres) any other on the same database, until ctx ends. Sends never
	// block: a slow reader sees only the latest value.
	Watch(ctx context.Context, room string) <-chan int64
	// WatchSeats returns a channel that receives a SeatChange after every RevokeSeat and
	// SetSeatToken, by this process or (postgres) any other on the same database, until ctx
	// ends or the store closes. Sends never block and nothing is lost: when the reader falls
	// behind, or the store may have missed changes (postgres: its listening connection
	// dropped), it receives the zero SeatChange, which means "check every seat again".
	WatchSeats(ctx context.Context) <-chan SeatChange

	Close() error
}

// SeatChange names a seat whose token was revoked or replaced. The zero value stands for
// changes that may have been missed: every seat is to be checked again.
type SeatChange struct {
	Room string
	Seat string
}

// Appended is what Store.Append returns: the stored message, embedded so that its fields read
// as the result's own (res.Seq), and whether it is a replay: the seat had already posted it
// with the same Idempotency-Key, so this append stored nothing and Message is the original.
type Appended struct {
	*Message
	Replay bool
}
