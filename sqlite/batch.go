package sqlite

import (
	"cmp"
	"fmt"
	"slices"
)

// The search index (migration 0003) is written once per group commit. The writes of a batch
// once ran in a savepoint each, and FTS5 writes the terms it holds in memory to disk as a new
// index segment whenever a savepoint is released: indexed by a trigger, a batch of N
// posts made N one-post segments, and FTS5 then spent as long merging them again (a tenth of
// the server's CPU). So the committer notes which messages each write stored, and after the
// last write of the batch, still inside its transaction, indexes them all in one statement
// per room: one segment per batch, committed (or rolled back) with the messages themselves.

// qIndexSearch indexes the room's messages $2 to $3, as the trigger of migration 0003 did.
const qIndexSearch = `INSERT INTO message_words (room, seq, body)
	SELECT room, seq, CAST(body AS TEXT) FROM messages WHERE room = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`

// batch is what the writes of one transaction leave for its end.
type batch struct {
	search []seqRange // messages stored, for the search index
	dedup  dedupBatch // seats read and messages stored, for the dedup memory (dedup.go)
	seqs   seqBatch   // each room's last seq taken (seq.go)
}

// reset empties b for the next batch, keeping its memory.
func (b *batch) reset() {
	clear(b.search) // the room names
	b.search = b.search[:0]
	clear(b.dedup.loaded)
	for k, es := range b.dedup.added {
		if len(es) == 0 {
			delete(b.dedup.added, k) // a seat that did not post in the last batch
		} else {
			b.dedup.added[k] = es[:0]
		}
	}
	clear(b.seqs.last)
}

// seqRange is the messages lo to hi of a room.
type seqRange struct {
	room   string
	lo, hi int64
}

// stored notes that the room's messages lo to hi were stored, joining the range noted last
// when it continues it (consecutive appends to one room).
func (b *batch) stored(room string, lo, hi int64) {
	if n := len(b.search); n > 0 {
		last := &b.search[n-1]
		if last.room == room && last.hi != maxSeq && last.hi+1 == lo {
			last.hi = hi
			return
		}
	}
	b.search = append(b.search, seqRange{room, lo, hi})
}

// maxSeq as the end of a range: every message from its start.
const maxSeq = 1<<63 - 1

// indexSearch adds the messages the batch stored to the search index: one statement per run
// of one room's seqs. The ranges of one room never overlap (a seq is stored once), but they
// are merged anyway when they touch, so that a room costs one statement.
func (s *Store) indexSearch(t *rawTx) error {
	if !s.searchByBatch || len(t.b.search) == 0 {
		return nil
	}
	rs := t.b.search
	if len(rs) > 1 {
		slices.SortFunc(rs, func(a, b seqRange) int {
			return cmp.Or(cmp.Compare(a.room, b.room), cmp.Compare(a.lo, b.lo))
		})
		merged := rs[:1]
		for _, r := range rs[1:] {
			last := &merged[len(merged)-1]
			if r.room == last.room && (last.hi == maxSeq || r.lo <= last.hi+1) {
				last.hi = max(last.hi, r.hi)
				continue
			}
			merged = append(merged, r)
		}
		rs = merged
	}
	for _, r := range rs {
		if _, err := t.exec(qIndexSearch, r.room, r.lo, r.hi); err != nil {
			return fmt.Errorf("search index of %s #%d-%d: %w", r.room, r.lo, r.hi, err)
		}
	}
	return nil
}
