package parley

import (
	"context"
	"io"
)

// RoomArchive is a room whole, as export writes it and import restores it: the room and its
// policy, its seats (without tokens), every message with its seq, time, tokens and notes, the
// asks with their states, the run records and the counters. Store.ImportRoom writes one into
// a store that lacks the room, in one transaction.
type RoomArchive struct {
	Room     *Room
	Seats    []*Seat
	Messages []*Message
	Asks     []*Ask
	Runs     []*Run
	// Stats are the room's counters as Store.Stats returns them: seat -> key -> value.
	Stats map[string]map[string]int64
}

// ImportResult is what an import reports: the room restored and how much it holds. The seats
// come without tokens (an export never holds one); rotate each to give it a new one.
type ImportResult struct {
	Room     string   `json:"room"`
	LastSeq  int64    `json:"last_seq"`
	Messages int      `json:"messages"`
	Asks     int      `json:"asks"`
	Runs     int      `json:"runs"`
	Seats    []string `json:"seats"`
}

// RoomArchiver is what the service offers beside RoomService for moving a room between
// servers: the server admin's export and import. room.Service implements it; the HTTP edge
// serves it where its service does.
type RoomArchiver interface {
	// ExportRoom writes the room as JSON lines (see package internal/archive) to w (admin).
	// EFORBIDDEN, ENOTFOUND.
	ExportRoom(ctx context.Context, c *Caller, room string, w io.Writer) error
	// ImportRoom reads an export from r and creates its room, with its history byte for byte
	// (admin). EINVALID names the line of a malformed file; ECONFLICT if the room exists.
	ImportRoom(ctx context.Context, c *Caller, r io.Reader) (*ImportResult, error)
}
