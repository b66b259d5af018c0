package room

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/textline"
)

// TimeFormat is how history writes a message's server time: ISO basic, UTC, with seconds.
const TimeFormat = "20060102T150405Z"

// History renders one page of the room's messages after `after` (see parley.HistoryPage) as
// byte-stable history text and returns the last seq it contains (after, when there is
// nothing new). The page is at most parley.HistoryPageBytes long, or one message.
func (s *Service) History(ctx context.Context, c *parley.Caller, room string, after int64, limit int) ([]byte, int64, error) {
	p, err := s.HistoryPage(ctx, c, room, after, limit)
	if err != nil {
		return nil, 0, err
	}
	if p.Size == 0 {
		return []byte{}, p.Last, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(p.Size))
	if err := p.Stream(&buf); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), p.Last, nil
}

// pageChunk is how many messages a page reads from the store at a time: with the largest
// messages a policy allows (1 MiB) that is a few MiB in memory per reader, whatever the room's
// size.
const pageChunk = 8

// HistoryPage plans one page of history in a first pass over the store, a chunk of messages
// at a time, keeping only its length, hash and bounds (and counting the read for the caller's
// seat); Stream reads the same messages again and writes them. Nothing holds the page whole.
func (s *Service) HistoryPage(ctx context.Context, c *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, parley.Errorf(parley.EINVALID, "after=%d: seqs start at 1", after).WithHint("use after=0 for the whole history")
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = parley.HistoryPageMessages
	}
	var rd *readCount
	if c.Seat != nil {
		rd = s.startRead(room, c.Seat.Name, after)
	}
	h := sha256.New()
	p := &parley.HistoryPage{After: after, Last: after}
	var block []byte
	n := 0
fill:
	for n < limit {
		want := min(pageChunk, limit-n)
		msgs, err := s.store.Messages(ctx, room, p.Last, want)
		if err != nil {
			return nil, s.internal(ctx, "history", err)
		}
		for _, m := range msgs {
			block = AppendMessage(block[:0], m)
			if n > 0 && p.Size+int64(len(block)) > parley.HistoryPageBytes {
				p.Full = true
				break fill
			}
			h.Write(block)
			p.Size += int64(len(block))
			p.Last = m.Seq
			n++
			if rd != nil {
				rd.add(s, room, m.Seq, block)
			}
		}
		if len(msgs) < want {
			break // the end of the room
		}
	}
	if n == limit {
		p.Full = true
	}
	// A stream or waiting read whose token was revoked meanwhile gets none of them (hold.go):
	// the token is confirmed after the messages were read.
	if n > 0 {
		if err := s.confirmHold(ctx); err != nil {
			return nil, err
		}
	}
	p.Sum = h.Sum(nil)
	if rd != nil && n > 0 {
		s.endRead(ctx, room, c.Seat.Name, rd, p.Last)
	}
	last := p.Last
	p.Stream = func(w io.Writer) error {
		var block []byte
		for at := after; at < last; {
			msgs, err := s.store.Messages(ctx, room, at, int(min(pageChunk, last-at)))
			if err != nil {
				return s.internal(ctx, "history", err)
			}
			if len(msgs) == 0 {
				return s.internal(ctx, "history", fmt.Errorf("messages %d..%d of room %s are gone", at+1, last, room))
			}
			for _, m := range msgs {
				block = AppendMessage(block[:0], m)
				if _, err := w.Write(block); err != nil {
					return err
				}
				at = m.Seq
			}
		}
		return nil
	}
	return p, nil
}

// AppendMessage appends one message's history block to dst:
//
//	#<seq> <seat> <time>\n
//	<body, line by line>\n
//	<each note>\n
//	\n
//
// The body's lines are package textline's, the one definition every edge uses: each line
// ends in LF (a CRLF is written as LF; a body without a final line end gets one), and
// anything stored before the line rules that could break a line or pass for a header or a
// note is shown escaped as [U+XXXX] (see textline.AppendBody). For every body the rules
// accept, that is the body as posted, with CRLF as LF. Every block ends with a blank line,
// so the text after any seq is exactly a suffix of the whole.
func AppendMessage(dst []byte, m *parley.Message) []byte {
	dst = append(dst, '#')
	dst = strconv.AppendInt(dst, m.Seq, 10)
	dst = append(dst, ' ')
	dst = append(dst, m.Seat...)
	dst = append(dst, ' ')
	dst = m.Time.UTC().AppendFormat(dst, TimeFormat)
	dst = append(dst, '\n')
	dst = textline.AppendBody(dst, m.Body)
	for _, n := range m.Notes {
		dst = textline.AppendNote(dst, n)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}

// readCount gathers, block by block, the tokens served to a seat and the part of them a
// provider prompt cache would serve (see Stats for the model). Tokens are counted per message
// block; a block ends in a blank line and the next starts with '#', which no BPE merge
// crosses, so the sum is the count of the whole text.
type readCount struct {
	after         int64 // where the read starts
	prefix        bool  // it starts where the seat's previous read started
	prevLast      int64 // where that read ended
	total, cached int64
}

func (s *Service) startRead(room, seat string, after int64) *readCount {
	s.reads.mu.Lock()
	prev, seen := s.reads.m[readKey{room, seat}]
	s.reads.mu.Unlock()
	// The read starts where the seat's previous read started, so its prompt begins with the
	// same bytes up to the previous read's end: the prefix a cache would hold.
	return &readCount{after: after, prefix: seen && prev.after == after, prevLast: prev.last}
}

func (rd *readCount) add(s *Service, room string, seq int64, block []byte) {
	n := int64(s.blockCount(room, seq, block))
	rd.total += n
	if rd.prefix && seq <= rd.prevLast {
		rd.cached += n
	}
}

func (s *Service) endRead(ctx context.Context, room, seat string, rd *readCount, last int64) {
	s.reads.mu.Lock()
	s.reads.m[readKey{room, seat}] = readMark{after: rd.after, last: last}
	s.reads.mu.Unlock()
	s.addStat(ctx, room, seat, "read_tokens", rd.total)
	s.addStat(ctx, room, seat, "cached_read_tokens", rd.cached)
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
