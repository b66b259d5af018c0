package room

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/textline"
)

// TimeFormat is how history writes a message's server time: ISO basic, UTC, with seconds.
const TimeFormat = textline.TimeFormat

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

// chunkBytes bounds what a page holds in memory at a time: it reads from the store as many
// messages as the room's largest allowed message fits this many times (8 to 256 messages: 64
// with the default 64 KiB cap, 8 with the largest cap a policy allows, 1 MiB), so a reader
// holds a few MiB whatever the room's size, and a page of small messages costs a handful of
// queries rather than one per 8 messages.
const chunkBytes = 4 << 20

// pageChunk is how many messages a page reads from the store at a time under policy p.
func pageChunk(p parley.Policy) int {
	return min(max(chunkBytes/max(p.WithDefaults().MaxMessageBytes, 1), 8), 256)
}

// HistoryPage plans one page of history in a first pass over the store, a chunk of messages
// at a time, keeping only its length, hash and bounds (and counting the read for the caller's
// seat); Stream reads the same messages again and writes them. Nothing holds the page whole,
// except a full page on its way into the page cache (pagecache.go): a full page never
// changes, so once streamed it is served from memory, to any caller who may read the room,
// and counted as the same read.
func (s *Service) HistoryPage(ctx context.Context, c *parley.Caller, room string, after int64, limit int) (*parley.HistoryPage, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if after < 0 {
		return nil, parley.Errorf(parley.EINVALID, "after=%d: seqs start at 1", after).WithHint("use after=0 for the whole history")
	}
	if limit <= 0 {
		limit = parley.HistoryPageMessages
	}
	key := pageKey{room, after, limit}
	if cp := s.pages.get(key); cp != nil {
		return s.cachedPage(ctx, c, cp)
	}
	r, err := s.room(ctx, room)
	if err != nil {
		return nil, err
	}
	chunk := pageChunk(r.Policy)
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
		want := min(chunk, limit-n)
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
	last, size, sum, full := p.Last, p.Size, p.Sum, p.Full
	p.Stream = func(w io.Writer) error {
		// A full page is kept as it is written, and cached once it is whole and what the
		// plan said it would be.
		var keep *cachedPage
		if full && s.pages.claim(key, size) {
			keep = &cachedPage{key: key, last: last, text: make([]byte, 0, size), offs: make([]int32, 1, last-after+1)}
			defer func() {
				if keep != nil {
					s.pages.unclaim(key) // the stream failed: someone else may fill it
				}
			}()
		}
		var block []byte
		for at := after; at < last; {
			msgs, err := s.store.Messages(ctx, room, at, int(min(int64(chunk), last-at)))
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
				if keep != nil {
					keep.text = append(keep.text, block...)
					keep.offs = append(keep.offs, int32(len(keep.text)))
				}
			}
		}
		if keep != nil {
			if got := sha256.Sum256(keep.text); int64(len(keep.text)) == size && bytes.Equal(got[:], sum) {
				keep.sum = sum
				s.pages.put(keep)
				keep = nil
			} else {
				s.log.ErrorContext(ctx, "room: a full history page changed between its two reads; not cached", "room", room, "after", after, "last", last)
			}
		}
		return nil
	}
	return p, nil
}

// cachedPage serves a full page from the page cache: the same page, hash and bytes as read
// from the store, counted for the caller's seat as the same read would be, and, under a held
// context, confirmed against the token before it is returned.
func (s *Service) cachedPage(ctx context.Context, c *parley.Caller, cp *cachedPage) (*parley.HistoryPage, error) {
	if err := s.confirmHold(ctx); err != nil {
		return nil, err
	}
	if c.Seat != nil {
		rd := s.startRead(cp.key.room, c.Seat.Name, cp.key.after)
		for i := range len(cp.offs) - 1 {
			rd.add(s, cp.key.room, cp.key.after+1+int64(i), cp.text[cp.offs[i]:cp.offs[i+1]])
		}
		s.endRead(ctx, cp.key.room, c.Seat.Name, rd, cp.last)
	}
	text := cp.text
	return &parley.HistoryPage{
		After: cp.key.after, Last: cp.last, Size: int64(len(text)), Sum: bytes.Clone(cp.sum), Full: true,
		Stream: func(w io.Writer) error {
			_, err := w.Write(text)
			return err
		},
	}, nil
}

// AppendMessage appends one message's history block to dst: textline.AppendMessage, the one
// rendering every edge uses (see there for the layout).
func AppendMessage(dst []byte, m *parley.Message) []byte { return textline.AppendMessage(dst, m) }

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
	if CacheableRead(rd.prefix, rd.after, rd.prevLast, rd.after, seq) {
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
