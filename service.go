package parley

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/diag"
)

// Caller is who is making a request: a seat of one room, or the server's admin (Seat nil).
type Caller struct {
	Admin bool
	Seat  *Seat
}

// PostResult is what a successful post returns.
type PostResult struct {
	Seq      int64        `json:"seq"`
	Tokens   int          `json:"tokens"`
	Notes    []string     `json:"notes"`
	Warnings []Diagnostic `json:"warnings"`
	Replay   bool         `json:"-"` // an Idempotency-Key replay: nothing new was stored (HTTP 200)
}

// Diagnostic is a finding about a posted message, with its position in the body: package
// diag's, the type the convention and AACP parsers return too.
type Diagnostic = diag.Diagnostic

// Inbox is what one seat owes and is owed in its room.
type Inbox struct {
	Seat       string     `json:"seat"`
	Room       string     `json:"room"`
	Unanswered []InboxAsk `json:"unanswered"` // asks addressed to the seat, still open
	Open       []InboxAsk `json:"open"`       // the seat's own asks, still open
}

// InboxAsk is one open ask as the inbox shows it.
type InboxAsk struct {
	Seq     int64      `json:"seq"`
	From    string     `json:"from"`
	To      string     `json:"to,omitempty"`
	Line    string     `json:"line"`
	Due     *time.Time `json:"due,omitempty"`
	Default string     `json:"default,omitempty"`
}

// StateRecord is the state of one topic of a room, built from its messages.
type StateRecord struct {
	Room      string         `json:"room"`
	Topic     string         `json:"topic"`
	LastSeq   int64          `json:"last_seq"`
	OpenAsks  []*Ask         `json:"open_asks"`
	Decisions []StateItem    `json:"decisions"`
	Done      []StateItem    `json:"done"`   // with their evidence verdict in Verdict
	Claims    []StateItem    `json:"claims"` // unproven: claims, dones without verified evidence
	Todos     []StateItem    `json:"todos"`  // from each seat's latest report
	Blocks    []StateItem    `json:"blocks"` // from each seat's latest report
	Costs     []StateItem    `json:"costs"`
	Tokens    map[string]int `json:"tokens"` // tokens posted on the topic, per seat
	// Dropped counts the items left out, oldest first, to keep the record within its cap
	// (room.StateJSONCap); the history has them.
	Dropped int `json:"dropped,omitempty"`
}

// StateItem is one line of a state record, with where it came from.
type StateItem struct {
	Seq     int64  `json:"seq"`
	Seat    string `json:"seat"`
	Text    string `json:"text"`
	Verdict string `json:"verdict,omitempty"` // for done: "verified", "unverified: …", "failed: …"
}

// RoomStats is what a room has cost and saved.
type RoomStats struct {
	Room            string                      `json:"room"`
	Messages        int64                       `json:"messages"`
	TokensPosted    map[string]int64            `json:"tokens_posted"`    // per seat
	DedupTokens     map[string]int64            `json:"dedup_tokens"`     // per seat: tokens refused as repeats
	ReadTokens      map[string]int64            `json:"read_tokens"`      // per seat: history tokens served
	Counters        map[string]map[string]int64 `json:"counters"`         // every raw counter
	CacheProjection CacheProjection             `json:"cache_projection"` // what prompt caching saves
}

// CacheProjection estimates, for the room's reads, the input cost with and without a provider
// prompt cache (cached input at about a tenth of the price), in tokens-equivalent.
type CacheProjection struct {
	ReadTokens      int64   `json:"read_tokens"`
	CachedTokens    int64   `json:"cached_tokens"`
	UncachedCost    float64 `json:"uncached_cost"`
	CachedCost      float64 `json:"cached_cost"`
	Saving          float64 `json:"saving"`
	CachedPriceRate float64 `json:"cached_price_rate"`
}

// RoomService is the room server's behaviour, shared by every edge (HTTP, MCP, web UI).
// Implemented by room.Service. Errors are *Error with the codes named; anything else is
// internal.
type RoomService interface {
	// Authenticate maps a bearer token to its caller. EUNAUTHORIZED for an unknown or revoked
	// token.
	Authenticate(ctx context.Context, token string) (*Caller, error)

	// CreateRoom (admin). EINVALID for a bad name or policy, ECONFLICT if it exists.
	CreateRoom(ctx context.Context, c *Caller, name string, p *Policy) (*Room, error)
	// UpdatePolicy merges the set fields of a JSON policy patch (admin). EINVALID, ENOTFOUND.
	UpdatePolicy(ctx context.Context, c *Caller, room string, patch []byte) (*Room, error)
	// Room returns a room the caller may see. EFORBIDDEN, ENOTFOUND.
	Room(ctx context.Context, c *Caller, room string) (*Room, error)
	// Rooms lists the rooms (admin: all; a seat: its own).
	Rooms(ctx context.Context, c *Caller) ([]*Room, error)
	// AddSeat creates a seat and returns it with its token, shown only here (admin of the
	// server or an admin seat of the room). EINVALID, ECONFLICT, ENOTFOUND, EFORBIDDEN.
	AddSeat(ctx context.Context, c *Caller, room, name string, role Role) (*Seat, string, error)
	// Seats lists a room's seats.
	Seats(ctx context.Context, c *Caller, room string) ([]*Seat, error)
	// RevokeSeat revokes a seat's token for good.
	RevokeSeat(ctx context.Context, c *Caller, room, name string) error
	// RotateSeat gives a seat a new token and returns it; the old one stops working.
	RotateSeat(ctx context.Context, c *Caller, room, name string) (string, error)

	// Post runs the post pipeline (see DESIGN.md) for the caller's seat. Errors: EFORBIDDEN
	// (another room, or admin without a seat), ETOOLARGE, EINVALID (Fields["diagnostics"]:
	// []Diagnostic), ECONFLICT (a repeat: Fields["seq"]), ERATELIMIT
	// (Fields["retry_after"]: seconds). body is the caller's again once Post returns (the HTTP
	// server reuses its buffer): an implementation copies what it keeps.
	Post(ctx context.Context, c *Caller, room string, body []byte, idempotencyKey string) (*PostResult, error)
	// PostDraft writes a message given by its parts (intent, topic, addressees, re, fact
	// lines) as convention text, the header's n= counted by the server (convention.Compose),
	// and posts that text through Post's pipeline: what is stored, and what history shows, is
	// exactly the composed text. EINVALID (Fields["diagnostics"]) for parts that do not make a
	// message, else Post's errors.
	PostDraft(ctx context.Context, c *Caller, room string, d *Draft, idempotencyKey string) (*PostResult, error)
	// Search finds the room's messages holding the words of query, best match first, at most
	// limit of them (limit <= 0: SearchDefaultLimit; at most SearchMaxLimit): each with its
	// seq, seat, time, topic and the lines that hold a word of the query. The query is plain
	// words: any other character only separates them. The same seats may search as may read
	// the history, and a search that returns messages counts as one of the seat's reads.
	// EINVALID for an empty or oversized query or a bad limit, EFORBIDDEN, ENOTFOUND.
	Search(ctx context.Context, c *Caller, room, query string, limit int) (*SearchResults, error)
	// History renders the room's messages after `after` as the byte-stable history text, one
	// page of them (see HistoryPage; limit <= 0: HistoryPageMessages), and returns the last seq
	// it contains (after, when empty).
	History(ctx context.Context, c *Caller, room string, after int64, limit int) ([]byte, int64, error)
	// HistoryPage plans the same page as History without building it, for an edge that
	// streams it: EINVALID, EFORBIDDEN, ENOTFOUND as History.
	HistoryPage(ctx context.Context, c *Caller, room string, after int64, limit int) (*HistoryPage, error)
	// Messages returns the room's stored messages after `after` (after < 0, or Latest: the
	// latest ones), with their token counts and frozen notes (evidence verdicts, defaults
	// applied), and the room's last seq as read with them. They are the messages of one page
	// of history (see HistoryPage): at most limit of them (limit <= 0: HistoryPageMessages),
	// and no more than HistoryPageBytes of history text, but at least one; a read of the
	// latest keeps the newest that fit. Each one's history text is textline.AppendMessage of
	// it, the bytes History serves for it. count says whether the read counts as the calling
	// seat's read (see ReadCount); under a held context (Hold), messages are returned only
	// while the token is still valid. EFORBIDDEN, ENOTFOUND.
	Messages(ctx context.Context, c *Caller, room string, after int64, limit int, count ReadCount) ([]*Message, int64, error)
	// Inbox returns the calling seat's unanswered and open asks.
	Inbox(ctx context.Context, c *Caller, room string) (*Inbox, error)
	// State returns the state record of a topic.
	State(ctx context.Context, c *Caller, room, topic string) (*StateRecord, error)
	// PostRun stores a test-run record (runner or admin seats). Body: JSON
	// {"id","commit","passed","failed"}, `go test -json` output, or JUnit XML.
	PostRun(ctx context.Context, c *Caller, room string, contentType string, body []byte, id string) (*Run, error)
	// Stats returns the room's costs and savings.
	Stats(ctx context.Context, c *Caller, room string) (*RoomStats, error)
	// Watch wakes with the room's last seq after each append, until ctx ends.
	Watch(ctx context.Context, c *Caller, room string) (<-chan int64, error)
	// Hold binds a long-lived request (an event stream, a waiting read, an MCP session) to the
	// caller's token: the returned context ends with ctx, or as soon as the token is revoked
	// or rotated, by this or any other server on the same database, with an EUNAUTHORIZED
	// *Error saying why as its context.Cause. History under it returns no message once the
	// token has stopped being valid. Call the CancelFunc when the request ends. EUNAUTHORIZED
	// if the token is no longer valid already; the admin's hold ends only with ctx.
	Hold(ctx context.Context, c *Caller) (context.Context, context.CancelFunc, error)
	// Lint checks a draft as Post would, without posting or counting it.
	Lint(ctx context.Context, c *Caller, room string, body []byte) ([]Diagnostic, error)
}

// Draft is a message given by its parts; see convention.Draft and RoomService.PostDraft.
type Draft = convention.Draft

// Search bounds: how many results one search returns by default and at most, how long its
// query may be and how many words of it count, and how many lines of each message it quotes.
const (
	SearchDefaultLimit = 20
	SearchMaxLimit     = 100
	SearchMaxQuery     = 512
	SearchMaxWords     = 16
	SearchMaxLines     = 5
	SearchMaxLineBytes = 400
)

// SearchResults is what a search found, best match first. More says there were more matches
// than the limit let through.
type SearchResults struct {
	Query   string      `json:"query"`
	Results []SearchHit `json:"results"`
	More    bool        `json:"more"`
}

// Text writes the results as every text edge shows them (the MCP search tool, `parley
// search`): per message a line with its seq, seat and time as the history header writes
// them and its topic, then its matching lines indented by two spaces, best match first.
func (r *SearchResults) Text() string {
	var b strings.Builder
	if len(r.Results) == 0 {
		fmt.Fprintf(&b, "no messages hold a word of %q\n", r.Query)
		return b.String()
	}
	for _, h := range r.Results {
		fmt.Fprintf(&b, "#%d %s %s", h.Seq, h.Seat, h.Time)
		if h.Topic != "" {
			fmt.Fprintf(&b, " topic %s", h.Topic)
		}
		b.WriteByte('\n')
		for _, l := range h.Lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if r.More {
		b.WriteString("(more matches: raise the limit, or add words)\n")
	}
	return b.String()
}

// SearchHit is one message a search found, as history names it (seq, seat, time in ISO
// basic UTC), with its topic and the lines that hold a word of the query (at most
// SearchMaxLines, each cut to SearchMaxLineBytes; the first line of the message when none
// does by the server's reckoning, for instance when only its header matched).
type SearchHit struct {
	Seq   int64    `json:"seq"`
	Seat  string   `json:"seat"`
	Time  string   `json:"time"`
	Topic string   `json:"topic"`
	Lines []string `json:"lines"`
}

// Latest is the after of a Messages read of the room's latest messages.
const Latest int64 = -1

// ReadCount says whether a structured read (RoomService.Messages) is counted in the stats of
// the calling seat. The server admin's reads are never counted: it holds no seat.
type ReadCount int

const (
	// CountRead counts the read as History counts one: the tokens of the messages' history
	// text as the seat's read_tokens, with the prompt-cache projection that follows each
	// seat's reads (cached_read_tokens), and one read. For every read whose messages someone
	// reads: an event stream's batch, a web transcript page.
	CountRead ReadCount = iota
	// NoCount counts nothing: for a read that shows no message to anyone, such as collecting
	// the topics a room names.
	NoCount
)

// History pages. A page of history holds at most HistoryPageMessages messages (unless the
// reader asks for another count) and at most HistoryPageBytes bytes, whichever comes first,
// but always at least one whole message. Pages end at message boundaries, so the text after
// any seq stays a suffix of the whole.
const (
	HistoryPageMessages = 1000
	HistoryPageBytes    = 4 << 20
)

// HistoryPage is one page of history, planned but not yet written: its bounds, length and
// SHA-256, and Stream, which writes its bytes (read again from the store, a few messages at a
// time, or, for a full page the server has served before, from its cache of full pages) to w. The bytes Stream writes are exactly Size long and hash to Sum: history is
// append-only, so the messages After+1..Last never change.
type HistoryPage struct {
	After int64  // the page starts after this seq
	Last  int64  // the last seq it holds; After when it is empty
	Size  int64  // its length in bytes
	Sum   []byte // SHA-256 of its bytes
	// Full is true when the page stopped at its message count or its byte cap rather than at
	// the end of the room: there may be more after Last. A full page never changes.
	Full   bool
	Stream func(w io.Writer) error
}
