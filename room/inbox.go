package room

import (
	"context"
	"fmt"
	"strings"

	"github.com/parleyhq/parley"
)

// Inbox returns the asks the calling seat owes (addressed to it or to all, still open) and the
// asks it is owed (its own, still open).
func (s *Service) Inbox(ctx context.Context, c *parley.Caller, room string) (*parley.Inbox, error) {
	seat, err := seatIn(c, room)
	if err != nil {
		return nil, err
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	asks, err := s.store.Asks(ctx, room, parley.AskOpen)
	if err != nil {
		return nil, s.internal(ctx, "inbox", err)
	}
	in := &parley.Inbox{Seat: seat.Name, Room: room, Unanswered: []parley.InboxAsk{}, Open: []parley.InboxAsk{}}
	// An ask to several named seats is stored as addressed to all (one ask per line); the
	// asking message's header says who it was really for.
	forMe := map[int64]bool{}
	for _, a := range asks {
		ia := parley.InboxAsk{Seq: a.Seq, From: a.From, To: a.To, Line: "ask " + a.Text, Due: a.Due, Default: a.Default}
		switch {
		case a.From == seat.Name:
			in.Open = append(in.Open, ia)
		case a.To == seat.Name:
			in.Unanswered = append(in.Unanswered, ia)
		case a.To == "all":
			mine, ok := forMe[a.Seq]
			if !ok {
				m, err := s.store.Message(ctx, room, a.Seq)
				if err != nil {
					return nil, s.internal(ctx, "inbox", err)
				}
				mine = addressedTo(m, seat.Name)
				forMe[a.Seq] = mine
			}
			if mine {
				in.Unanswered = append(in.Unanswered, ia)
			}
		}
	}
	return in, nil
}

// RenderInbox writes an inbox in the convention, for a seat to read before it posts:
//
//	you are yu in room demo
//	v1 inbox demo to yu n=3
//	ask #3 from builder: how to store rate-limit counters, 20260918T0900Z
//	default #3 silence past the ask time→A with the fail-open
//	req answer each ask with re <seq> in your header
//
// The first line is not part of the message: it tells the reader who it is, which is half of
// what makes addressing work.
func RenderInbox(in *parley.Inbox) string {
	var lines []string
	for _, a := range in.Unanswered {
		lines = append(lines, fmt.Sprintf("ask #%d from %s: %s", a.Seq, a.From, askText(a)))
		if a.Default != "" {
			lines = append(lines, fmt.Sprintf("default #%d %s", a.Seq, oneLine(a.Default)))
		}
	}
	if len(in.Unanswered) > 0 {
		lines = append(lines, "req answer each ask with re <seq> in your header")
	}
	for _, a := range in.Open {
		lines = append(lines, fmt.Sprintf("waiting #%d on %s: %s", a.Seq, a.To, askText(a)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "you are %s in room %s\n", in.Seat, in.Room)
	fmt.Fprintf(&b, "v1 inbox %s to %s n=%d\n", in.Room, in.Seat, len(lines))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// askText is the ask's text, with its due time appended when the text does not carry it.
func askText(a parley.InboxAsk) string {
	t := oneLine(strings.TrimPrefix(a.Line, "ask "))
	if a.Due != nil && !strings.Contains(t, formatTime(*a.Due)) {
		t += ", due " + formatTime(*a.Due)
	}
	return t
}
