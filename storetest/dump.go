package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
)

// RoomDump writes what a room holds as text, to compare two rooms that should hold the same
// (a batch against the same writes one at a time): each message's seq, seat, body and
// idempotency key, each ask's state, and the room's last seq. It fails t where the seqs do not
// run 1..n or the last seq is not n.
func RoomDump(t testing.TB, s parley.Store, room string) string {
	t.Helper()
	var out strings.Builder
	msgs, err := s.Messages(t.Context(), room, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.Seq != int64(i+1) {
			t.Errorf("%s: message %d has seq %d", room, i, m.Seq)
		}
		fmt.Fprintf(&out, "%d %s %q %s\n", m.Seq, m.Seat, m.Body, m.IdempotencyKey)
	}
	asks, err := s.Asks(t.Context(), room, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range asks {
		fmt.Fprintf(&out, "ask %d/%d to %s %s by %d\n", a.Seq, a.Line, a.To, a.State, a.ClosedBy)
	}
	last, err := s.LastSeq(t.Context(), room)
	if err != nil {
		t.Fatal(err)
	}
	if last != int64(len(msgs)) {
		t.Errorf("%s: last seq %d, %d messages", room, last, len(msgs))
	}
	return out.String()
}

// Outcome is what an append (or a counter write) came to, comparable between two rooms: the
// seq stored or replayed, or the error's code, message and the seq it names.
type Outcome struct {
	Seq     int64
	Replay  bool
	Code    string
	DupSeq  any
	Message string
}

// OutcomeOf reads an Append's (or AddStat's) result as an Outcome; an error that is no
// *parley.Error has the code "other".
func OutcomeOf(res parley.Appended, err error) Outcome {
	if err != nil {
		var pe *parley.Error
		if errors.As(err, &pe) {
			return Outcome{Code: pe.Code, DupSeq: pe.Fields["seq"], Message: pe.Message}
		}
		return Outcome{Code: "other", Message: err.Error()}
	}
	if res.Message == nil { // a counter
		return Outcome{}
	}
	return Outcome{Seq: res.Seq, Replay: res.Replay}
}
