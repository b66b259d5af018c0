package room

import (
	"context"
	"strconv"
	"sync"
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
	// A stream or waiting read whose token was revoked meanwhile gets none of them (hold.go).
	if err := s.confirmHold(ctx); err != nil {
		return nil, 0, err
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
// would serve (see Stats for the model). Tokens are counted per message block; a block ends in
// a blank line and the next starts with '#', which no BPE merge crosses, so the sum is the
// count of the whole text.
func (s *Service) countRead(ctx context.Context, room, seat string, after int64, msgs []*parley.Message, buf []byte, blocks []int) {
	k := readKey{room, seat}
	s.reads.mu.Lock()
	prev, seen := s.reads.m[k]
	s.reads.m[k] = readMark{after: after, last: msgs[len(msgs)-1].Seq}
	s.reads.mu.Unlock()

	// The read starts where the seat's previous read started, so its prompt begins with the
	// same bytes up to the previous read's end: the prefix a cache would hold.
	prefix := seen && prev.after == after
	var total, cached int64
	start := 0
	for i, m := range msgs {
		n := int64(s.blockCount(room, m.Seq, buf[start:blocks[i]]))
		total += n
		if prefix && m.Seq <= prev.last {
			cached += n
		}
		start = blocks[i]
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

// blockTokens caches the token count of each message's history block. Messages never change,
// so a block is tokenized once per process however often it is read.
type blockTokens struct {
	mu sync.Mutex
	m  map[blockKey]int
}

type blockKey struct {
	room string
	seq  int64
}

// maxBlockCache bounds the cache; past it the cache starts afresh.
const maxBlockCache = 1 << 20

func (s *Service) blockCount(room string, seq int64, block []byte) int {
	k := blockKey{room, seq}
	s.blocks.mu.Lock()
	n, ok := s.blocks.m[k]
	s.blocks.mu.Unlock()
	if ok {
		return n
	}
	n = s.tok.Count(string(block))
	s.blocks.mu.Lock()
	if len(s.blocks.m) >= maxBlockCache {
		clear(s.blocks.m)
	}
	s.blocks.m[k] = n
	s.blocks.mu.Unlock()
	return n
}
