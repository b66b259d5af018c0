package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"
)

// The search index (migration 0003) is written in chunks. FTS5 writes the terms it holds in
// memory to disk as a new index segment at the end of every statement that indexes rows (and
// merges segments later), about nine pages however few messages it holds: indexed in each
// group commit, a batch of seven posts wrote a third of its pages for the index.
// So the committer leaves the messages of most batches unindexed and indexes them together,
// in one statement per room, inside the transaction of a later batch once searchChunk of them
// wait, or in a transaction of its own once no write has come for searchIdle.
//
// A search never misses a committed message for it: the room's index is first brought up to
// its last message (Search, searchCurrent), through the committer, in the batch running then,
// when the room has messages not yet indexed. search_progress (migration 0005) holds each
// room's indexed seq, written in the transaction that indexes, so an index is always exactly
// the messages up to it; Open indexes what a crash or a stop left behind, and Close what
// waits. Nothing else reads message_words: backups copy it with search_progress, and the
// store that opens the copy catches up.

// searchChunk is how many messages, left unindexed by the batches that stored them, make the
// next batch index them; searchIdle is how long the committer waits for a write before it
// indexes what waits in a transaction of its own (long enough that a server posted to every
// few milliseconds does not pay a second fsync for every batch).
//
// A chunk of 128 posts of about 250 bytes took 1.5 to 2 ms to index on the shared test machine
// (the batch that carries it waits as long). BenchmarkCommitBatch, batches of 7: 4.4 WAL
// frames per post when each batch indexed its own messages, 3.2 in chunks; batches of 1:
// 15.2 and 7.0.
const (
	searchChunk = 128
	searchIdle  = 50 * time.Millisecond
)

// qIndexSearch indexes the room's messages after its progress; qSearchProgress then records
// its last message as indexed (writing nothing when that is already so).
const (
	qIndexSearch = `INSERT INTO message_words (room, seq, body)
	SELECT room, seq, CAST(body AS TEXT) FROM messages
	WHERE room = $1 AND seq > coalesce((SELECT seq FROM search_progress WHERE room = $1), 0) ORDER BY seq`
	qSearchProgress = `INSERT INTO search_progress (room, seq)
	SELECT $1, coalesce(max(seq), 0) FROM messages WHERE room = $1
	ON CONFLICT (room) DO UPDATE SET seq = excluded.seq WHERE seq <> excluded.seq`
	// qSearchBehind lists the rooms that have messages after their progress.
	qSearchBehind = `SELECT name FROM rooms
	WHERE coalesce((SELECT max(seq) FROM messages WHERE room = rooms.name), 0) >
		coalesce((SELECT seq FROM search_progress WHERE room = rooms.name), 0)`
	// qRoomBehind tells whether the room has messages after its progress.
	qRoomBehind = `SELECT coalesce((SELECT max(seq) FROM messages WHERE room = $1), 0) >
		coalesce((SELECT seq FROM search_progress WHERE room = $1), 0)`
)

// batch is what the writes of one transaction leave for its end.
type batch struct {
	search    []roomCount // messages stored, for the search index, by room
	searchNow bool        // index in this transaction, whatever the chunk
	indexed   bool        // the transaction indexed every waiting message
	dedup     dedupBatch  // seats read and messages stored, for the dedup memory (dedup.go)
	seqs      seqBatch    // each room's last seq taken (seq.go)
}

// roomCount is a number of a room's messages.
type roomCount struct {
	room string
	n    int
}

// reset empties b for the next batch, keeping its memory.
func (b *batch) reset() {
	clear(b.search) // the room names
	b.search = b.search[:0]
	b.searchNow, b.indexed = false, false
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

// stored notes that the room's messages lo to hi were stored, to be indexed.
func (b *batch) stored(room string, lo, hi int64) {
	for i := range b.search {
		if b.search[i].room == room {
			b.search[i].n += int(hi - lo + 1)
			return
		}
	}
	b.search = append(b.search, roomCount{room, int(hi - lo + 1)})
}

// indexNow makes the transaction index the room, and every message waiting, before it commits.
func (b *batch) indexNow(room string) {
	b.stored(room, 1, 0) // no message, but the room
	b.searchNow = true
}

// searchLag is what the committer's batches left unindexed: only the committer changes it,
// under mu, which Search takes to read rooms.
type searchLag struct {
	mu    sync.Mutex
	rooms map[string]int // room → messages committed and not indexed
	n     int            // their sum
}

// behind tells whether the room has messages this store committed and did not index.
func (l *searchLag) behind(room string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rooms[room] > 0
}

// indexSearch indexes, before COMMIT, the messages of every room with some waiting (those
// the batch stored, those earlier batches left, and those of a room indexNow named), when
// the batch must or the waiting ones make a chunk. It tells whether it did.
func (s *Store) indexSearch(t *rawTx) (bool, error) {
	b := &t.b
	if !s.searchByBatch || !b.searchNow && s.lag.n+batchStored(b) < searchChunk {
		return false, nil
	}
	rooms := make([]string, 0, len(b.search)+len(s.lag.rooms))
	for _, r := range b.search {
		rooms = append(rooms, r.room)
	}
	for room := range s.lag.rooms {
		rooms = append(rooms, room)
	}
	slices.Sort(rooms)
	for _, room := range slices.Compact(rooms) {
		if err := catchUp(func(q string, args ...any) (affected, error) {
			return t.exec(q, args...)
		}, room); err != nil {
			return false, err
		}
	}
	return true, nil
}

// searchExec runs one statement of a catch-up: in a committer's batch (rawTx.exec) or in
// the transaction Open runs (catchUpAll).
type searchExec func(query string, args ...any) (affected, error)

// affected is what both results give: sql.Result and driver.Result.
type affected interface{ RowsAffected() (int64, error) }

// catchUp indexes the room's messages after its progress, and moves the progress to its last.
func catchUp(exec searchExec, room string) error {
	res, err := exec(qIndexSearch, room)
	if err != nil {
		return fmt.Errorf("search index of %s: %w", room, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	if _, err := exec(qSearchProgress, room); err != nil {
		return fmt.Errorf("search progress of %s: %w", room, err)
	}
	return nil
}

func batchStored(b *batch) int {
	n := 0
	for _, r := range b.search {
		n += r.n
	}
	return n
}

// searchCommitted updates the lag with a committed batch, before any of its writes returns.
func (s *Store) searchCommitted(b *batch) {
	if !s.searchByBatch || !b.indexed && batchStored(b) == 0 {
		return
	}
	s.lag.mu.Lock()
	defer s.lag.mu.Unlock()
	if b.indexed {
		clear(s.lag.rooms)
		s.lag.n = 0
		return
	}
	if s.lag.rooms == nil {
		s.lag.rooms = map[string]int{}
	}
	for _, r := range b.search {
		if r.n > 0 {
			s.lag.rooms[r.room] += r.n
			s.lag.n += r.n
		}
	}
}

// indexWaiting indexes every message waiting, in a transaction of the committer's own (the
// committer calls it when idle and when it stops).
func (s *Store) indexWaiting() {
	if s.lag.n == 0 {
		return
	}
	o := &txOp{ctx: context.Background(), done: make(chan struct{}), run: func(_ context.Context, t txStmts) error {
		t.t.b.searchNow = true
		return nil
	}}
	s.commitBatch([]*txOp{o})
}

// searchCurrent brings the room's search index up to its last committed message, unless it
// is already: a Sole store knows which rooms its batches left behind; another reads the
// progress (another store may have written the file).
func (s *Store) searchCurrent(ctx context.Context, room string) error {
	if !s.searchByBatch {
		return nil
	}
	if s.seqs.on {
		if !s.lag.behind(room) {
			return nil
		}
	} else {
		var behind bool
		if err := s.r.queryRow(ctx, qRoomBehind, room).Scan(&behind); err != nil {
			return fmt.Errorf("search: %w", err)
		}
		if !behind {
			return nil
		}
	}
	err := s.inTx(ctx, func(_ context.Context, t txStmts) error {
		t.t.b.indexNow(room)
		return nil
	})
	if err != nil {
		return fmt.Errorf("search: index %s: %w", room, err)
	}
	return nil
}

// catchUpAll indexes, when the store opens, the messages a crash or a stop left unindexed.
func catchUpAll(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, qSearchBehind)
	if err != nil {
		return err
	}
	var rooms []string
	for rows.Next() {
		var room string
		if err := rows.Scan(&room); err != nil {
			rows.Close()
			return err
		}
		rooms = append(rooms, room)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(rooms) == 0 {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) (affected, error) {
		return tx.ExecContext(ctx, q, args...)
	}
	for _, room := range rooms {
		if err := catchUp(exec, room); err != nil {
			return err
		}
	}
	return tx.Commit()
}
