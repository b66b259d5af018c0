// Package parley holds the domain of the room server: rooms, seats, messages, asks, runs and
// state records, the one error type, and the service interfaces that the stores (sqlite,
// postgres) implement and the edges (http, mcp, the CLI) call.
//
// It depends on the standard library only. The libraries that know nothing of the server
// (bpe, convention, aacp, a2c, trace) live in their own packages.
package parley

import (
	"encoding/json"
	"fmt"
	"time"
)

// Role is what a seat may do in its room.
type Role string

const (
	RoleAgent  Role = "agent"  // posts and reads
	RoleHuman  Role = "human"  // posts and reads, shown as a person in the UI
	RoleRunner Role = "runner" // also posts test-run records (POST …/runs)
	RoleAdmin  Role = "admin"  // also manages the room's seats and policy
)

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleAgent, RoleHuman, RoleRunner, RoleAdmin:
		return true
	}
	return false
}

// Message formats, as detected and stored for every message.
const (
	FormatConvention = "convention"
	FormatAACP       = "aacp"
	FormatText       = "text"
)

// Room format policies.
const (
	PolicyStrict  = "strict"  // convention or AACP only
	PolicyLenient = "lenient" // plain text accepted, with warnings
)

// SystemSeat is the name under which the server itself posts (lapsed asks, defaults applied).
const SystemSeat = "room"

// Duration is a time.Duration that reads and writes JSON as a Go duration string ("24h").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"24h\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Policy is a room's settings. The zero value of a field means "use the default" only when
// the policy passes through Policy.WithDefaults.
type Policy struct {
	Format                string   `json:"format"`
	MaxMessageBytes       int      `json:"max_message_bytes"`
	SeatMessagesPerMinute float64  `json:"seat_messages_per_minute"`
	SeatBurst             int      `json:"seat_burst"`
	SeatTokensPerMinute   int      `json:"seat_tokens_per_minute"`
	RoomMessagesPerMinute float64  `json:"room_messages_per_minute"`
	RoomBurst             int      `json:"room_burst"`
	DedupWindow           Duration `json:"dedup_window"`
	DedupMessages         int      `json:"dedup_messages"`
	// MaxEvidenceChecks bounds the ev lines of one message that the server resolves (each can
	// run git); the rest are frozen as unverified.
	MaxEvidenceChecks int `json:"max_evidence_checks"`
}

// MaxEvidenceChecksLimit is the highest max_evidence_checks a policy may set.
const MaxEvidenceChecksLimit = 200

// DefaultPolicy is the policy of a room created without one.
func DefaultPolicy() Policy {
	return Policy{
		Format:                PolicyStrict,
		MaxMessageBytes:       65536,
		SeatMessagesPerMinute: 30,
		SeatBurst:             10,
		SeatTokensPerMinute:   20000,
		RoomMessagesPerMinute: 600,
		RoomBurst:             100,
		DedupWindow:           Duration(24 * time.Hour),
		DedupMessages:         500,
		MaxEvidenceChecks:     20,
	}
}

// WithDefaults returns p with every zero field set from DefaultPolicy.
func (p Policy) WithDefaults() Policy {
	d := DefaultPolicy()
	if p.Format == "" {
		p.Format = d.Format
	}
	if p.MaxMessageBytes == 0 {
		p.MaxMessageBytes = d.MaxMessageBytes
	}
	if p.SeatMessagesPerMinute == 0 {
		p.SeatMessagesPerMinute = d.SeatMessagesPerMinute
	}
	if p.SeatBurst == 0 {
		p.SeatBurst = d.SeatBurst
	}
	if p.SeatTokensPerMinute == 0 {
		p.SeatTokensPerMinute = d.SeatTokensPerMinute
	}
	if p.RoomMessagesPerMinute == 0 {
		p.RoomMessagesPerMinute = d.RoomMessagesPerMinute
	}
	if p.RoomBurst == 0 {
		p.RoomBurst = d.RoomBurst
	}
	if p.DedupWindow == 0 {
		p.DedupWindow = d.DedupWindow
	}
	if p.DedupMessages == 0 {
		p.DedupMessages = d.DedupMessages
	}
	if p.MaxEvidenceChecks == 0 {
		p.MaxEvidenceChecks = d.MaxEvidenceChecks
	}
	return p
}

// Validate reports the first field that is out of range, as an EINVALID error.
func (p Policy) Validate() error {
	switch {
	case p.Format != PolicyStrict && p.Format != PolicyLenient:
		return Errorf(EINVALID, "policy format %q is not strict or lenient", p.Format)
	case p.MaxMessageBytes < 64 || p.MaxMessageBytes > 1<<20:
		return Errorf(EINVALID, "max_message_bytes %d is outside 64..1048576", p.MaxMessageBytes)
	case p.SeatMessagesPerMinute <= 0 || p.RoomMessagesPerMinute <= 0:
		return Errorf(EINVALID, "messages_per_minute must be positive")
	case p.SeatBurst < 1 || p.RoomBurst < 1:
		return Errorf(EINVALID, "burst must be at least 1")
	case p.SeatTokensPerMinute < 1:
		return Errorf(EINVALID, "seat_tokens_per_minute must be at least 1")
	case p.DedupWindow < 0 || p.DedupMessages < 0:
		return Errorf(EINVALID, "dedup_window and dedup_messages must not be negative")
	case p.MaxEvidenceChecks < 1 || p.MaxEvidenceChecks > MaxEvidenceChecksLimit:
		return Errorf(EINVALID, "max_evidence_checks %d is outside 1..%d", p.MaxEvidenceChecks, MaxEvidenceChecksLimit)
	}
	return nil
}
