package room

import (
	"context"
	"strconv"
	"time"

	"github.com/parleyhq/parley"
)

// TimeFormat is how history writes a message's server time: ISO basic, UTC, with seconds.
const TimeFormat = "20060102T150405Z"

// History renders the room's messages after `after` as byte-stable history text and returns
// the last seq it contains (after, when there is nothing new).
func (s *Service) History(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
	if err := canSee(c, room); err != nil {
		return nil, 0, err
	}
	if after < 0 {
		return nil, 0, parley.Errorf(parley.EINVALID, "after=%d: seqs start at 1", after).WithHint("use after=0 for the whole history")
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, 0, err
	}
	msgs, err := s.store.Messages(ctx, room, after, limit)
	if err != nil {
		return nil, 0, s.internal(ctx, "history", err)
	}
	if len(msgs) == 0 {
		return []byte{}, after, nil
	}
	var buf []byte
	blocks := make([]int, 0, len(msgs)) // end offset of each message's block
	for _, m := range msgs {
		buf = AppendMessage(buf, m)
		blocks = append(blocks, len(buf))
	}
	last := msgs[len(msgs)-1].Seq
	if c.Seat != nil {
		s.countRead(ctx, room, c.Seat.Name, after, msgs, buf, blocks)
	}
	return buf, last, nil
}

// AppendMessage appends one message's history block to dst:
//
//	#<seq> <seat> <time>\n
//	<body as posted; a final \n added only if it lacks one>
//	<each note>\n
//	\n
//
// Every block ends with a blank line, so the text after any seq is exactly a suffix of the
// whole.
func AppendMessage(dst []byte, m *parley.Message) []byte {
	dst = append(dst, '#')
	dst = strconv.AppendInt(dst, m.Seq, 10)
	dst = append(dst, ' ')
	dst = append(dst, m.Seat...)
	dst = append(dst, ' ')
	dst = m.Time.UTC().AppendFormat(dst, TimeFormat)
	dst = append(dst, '\n')
	dst = append(dst, m.Body...)
	if len(m.Body) == 0 || m.Body[len(m.Body)-1] != '\n' {
		dst = append(dst, '\n')
	}
	for _, n := range m.Notes {
		dst = append(dst, n...)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

// countRead records the tokens served to a seat and the part of them a provider prompt cache
// would serve (see Stats for the model).
func (s *Service) countRead(ctx context.Context, room, seat string, after int64, msgs []*parley.Message, buf []byte, blocks []int) {
	total := int64(s.tok.Count(string(buf)))
	k := readKey{room, seat}
	s.reads.mu.Lock()
	prev, seen := s.reads.m[k]
	s.reads.m[k] = readMark{after: after, last: msgs[len(msgs)-1].Seq}
	s.reads.mu.Unlock()

	var cached int64
	if seen && prev.after == after && prev.last > after {
		// The read starts where the seat's previous read started, so its prompt begins with
		// the same bytes up to the previous read's end: the prefix a cache would hold.
		end := 0
		for i, m := range msgs {
			if m.Seq > prev.last {
				break
			}
			end = blocks[i]
		}
		if end == len(buf) {
			cached = total
		} else if end > 0 {
			cached = int64(s.tok.Count(string(buf[:end])))
		}
	}
	s.addStat(ctx, room, seat, "read_tokens", total)
	s.addStat(ctx, room, seat, "cached_read_tokens", cached)
	s.addStat(ctx, room, seat, "reads", 1)
}

// formatTime is the ISO basic form used inside convention lines: minutes, or seconds when set.
func formatTime(t time.Time) string {
	t = t.UTC()
	if t.Second() != 0 {
		return t.Format(TimeFormat)
	}
	return t.Format("20060102T1504Z")
}
