package sqlite

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// Dedup runs twice per post: early, on the read pool (Store.Duplicate, which the service
// calls before its other checks), and again in the append's transaction, where it is the
// authority. As a query each cost more than the rest of the append's statements together.
// When this Store is the only writer of its file (Sole), every message stored passes through
// its committer, which can then keep, for each seat it has seen post, the seat's latest
// messages in memory: seq, time and a fingerprint of the hash. Almost every post repeats
// nothing, and the memory answers that alone: no message of the seat in the range dedup
// looks at has the fingerprint. Whenever it cannot say so for sure (a fingerprint matches,
// which may be a real repeat or a collision; or the range reaches past what it holds) the
// query runs, as without it, and its answer stands. So the memory only ever skips a query
// whose answer it knows to be 0.
//
// Only the committer changes the memory, after a batch commits, with what the batch stored;
// within a batch it sees the committed memory plus the batch's own appends so far, which is
// exactly what the transaction sees.

// dedupKeep is how many of a seat's latest messages the memory holds; dedupMax bounds all
// seats together (past it, seats are forgotten until it fits). Variables for the tests.
var (
	dedupKeep = 2048
	dedupMax  = 1 << 18
)

// dedupEntry is one message: its seq, time (µs) and fingerprint (0: no hash).
type dedupEntry struct {
	seq, time int64
	fp        uint64
}

// seatLog is the latest messages of one seat, oldest first.
type seatLog struct {
	entries []dedupEntry
	fps     map[uint64]int32 // how many of entries have each fingerprint (none for 0)
	// complete: entries holds every message of the seat. Otherwise older is the latest
	// time among those it does not hold (maxSeq: not known).
	complete bool
	older    int64
}

// dedupMemory is the committed state, shared by the committer and Store.Duplicate.
type dedupMemory struct {
	on    bool // Sole
	seed  maphash.Seed
	mu    sync.Mutex
	seats map[seatKey]*seatLog
	total int // entries over all seats
}

// fingerprint of a hash; 0 for none.
func (d *dedupMemory) fingerprint(hash []byte) uint64 {
	if len(hash) == 0 {
		return 0
	}
	return maphash.Bytes(d.seed, hash) | 1
}

// clear reports whether dedup over log and then extra (newer, oldest first) surely finds
// nothing: no message in the range it looks at (after since, when window; among the last n,
// when n > 0) has the fingerprint fp.
func (l *seatLog) clear(extra []dedupEntry, fp uint64, window bool, since int64, n int) bool {
	held := len(l.entries) + len(extra)
	if !l.complete && (window && l.older > since || n > held) {
		return false // the range reaches messages the memory does not hold
	}
	// Any entry with the fingerprint sends the question to the query: a message older
	// than the range is rare enough not to be worth telling apart.
	for _, e := range extra {
		if e.fp == fp {
			return false
		}
	}
	return l.fps[fp] == 0
}

// counted adds d to the count of e's fingerprint.
func (l *seatLog) counted(e dedupEntry, d int32) {
	if e.fp == 0 {
		return
	}
	if l.fps == nil {
		l.fps = map[uint64]int32{}
	}
	if c := l.fps[e.fp] + d; c != 0 {
		l.fps[e.fp] = c
	} else {
		delete(l.fps, e.fp)
	}
}

// add appends es (newer than what l holds); past a quarter more than dedupKeep it drops the
// oldest, down to dedupKeep, in place (so a busy seat moves its entries once per dedupKeep/4
// posts, not on every one). It returns the change in the number of entries. The caller holds
// the memory's lock.
func (l *seatLog) add(es []dedupEntry) int {
	before := len(l.entries)
	l.entries = append(l.entries, es...)
	for _, e := range es {
		l.counted(e, 1)
	}
	if len(l.entries) > dedupKeep+dedupKeep/4 {
		over := len(l.entries) - dedupKeep
		for _, e := range l.entries[:over] {
			l.older = max(l.older, e.time)
			l.counted(e, -1)
		}
		l.complete = false
		n := copy(l.entries, l.entries[over:])
		l.entries = l.entries[:n]
	}
	return len(l.entries) - before
}

// surelyNone reports whether the committed memory knows that the seat has no repeat of hash
// (Store.Duplicate).
func (d *dedupMemory) surelyNone(room, seat string, hash []byte, since time.Time, n int) bool {
	if !d.on {
		return false
	}
	fp := d.fingerprint(hash)
	d.mu.Lock()
	defer d.mu.Unlock()
	l := d.seats[seatKey{room, seat}]
	return l != nil && l.clear(nil, fp, !since.IsZero(), toMicros(since), n)
}

// dedupBatch is the committer's view within one batch: the seats it read from the
// transaction in this batch, and the messages the batch stored for seats it knows.
type dedupBatch struct {
	loaded map[seatKey]*seatLog
	added  map[seatKey][]dedupEntry
}

// A seat the memory does not hold yet is read from the transaction. qSeatCount counts its
// messages (seat_index's entries and the room's messages after them, qSeatSeqs), up to one
// more than seatIndexScan. When it has no more than that, qSeatLatest reads its latest
// dedupKeep+1 (sorted by seq, then their rows), and, if it has more than dedupKeep, qSeatOlder
// the latest time among the others, looking at no more than seatOlderScan of them (past it,
// that time is not known). A seat with more messages than seatIndexScan is read through the
// primary key instead: its messages among the room's latest seatRecentScan (qRoomLast,
// qSeatRecent), what it posted before them not known. No index on messages is keyed by seat:
// keeping one cost a page written to the WAL for nearly every post (seatindex.go).
const (
	qSeatCount  = `SELECT count(*) FROM (` + qSeatSeqs + ` LIMIT ?3)`
	qSeatLatest = `SELECT m.seq, m.time, m.hash FROM (` + qSeatSeqs + ` ORDER BY seq DESC LIMIT ?3) AS k
		CROSS JOIN messages AS m ON m.room = ?1 AND m.seq = k.seq`
	qSeatOlder = `SELECT count(*), coalesce(max(m.time), 0) FROM
		(SELECT seq FROM (` + qSeatSeqs + `) WHERE seq <= ?3 LIMIT ?4) AS k
		CROSS JOIN messages AS m ON m.room = ?1 AND m.seq = k.seq`
	qRoomLast   = `SELECT coalesce(max(seq), 0) FROM messages WHERE room = ?1`
	qSeatRecent = `SELECT seq, time, hash FROM messages WHERE room = ?1 AND seat = ?2 AND seq > ?3 ORDER BY seq DESC`
)

// seatIndexScan, seatOlderScan and seatRecentScan bound what reading a seat looks at
// (variables for the tests).
var (
	seatIndexScan  = 100000
	seatOlderScan  = 20000
	seatRecentScan = 32768
)

// logOf returns the seat's messages as the transaction sees them but for those the batch
// added (see added), reading them from the transaction if neither the memory nor the batch
// has them yet.
func (s *Store) logOf(t *rawTx, k seatKey) (*seatLog, error) {
	if l := t.b.dedup.loaded[k]; l != nil {
		return l, nil
	}
	s.dedup.mu.Lock()
	l := s.dedup.seats[k]
	s.dedup.mu.Unlock()
	if l != nil {
		return l, nil
	}
	l, err := s.readSeat(t, k)
	if err != nil {
		return nil, err
	}
	if t.b.dedup.loaded == nil {
		t.b.dedup.loaded = map[seatKey]*seatLog{}
	}
	t.b.dedup.loaded[k] = l
	// What the batch added for the seat is in the transaction, so in what was just read.
	delete(t.b.dedup.added, k)
	return l, nil
}

// readSeat reads the seat's latest messages from the transaction (see qSeatCount).
func (s *Store) readSeat(t *rawTx, k seatKey) (*seatLog, error) {
	var rows []dedupEntry // newest first
	each := func(r *rawRow) error {
		var e dedupEntry
		var hash []byte
		if err := r.Scan(&e.seq, &e.time, &hash); err != nil {
			return err
		}
		e.fp = s.dedup.fingerprint(hash)
		rows = append(rows, e)
		return nil
	}
	var n int64
	if err := t.queryRow(qSeatCount, k.room, k.name, int64(seatIndexScan+1)).Scan(&n); err != nil {
		return nil, err
	}
	l := &seatLog{}
	if n <= int64(seatIndexScan) {
		if err := t.query(qSeatLatest, []any{k.room, k.name, int64(dedupKeep + 1)}, each); err != nil {
			return nil, err
		}
		slices.SortFunc(rows, func(a, b dedupEntry) int { return cmp.Compare(b.seq, a.seq) })
		l.complete = len(rows) <= dedupKeep
		if !l.complete {
			var older int64
			if err := t.queryRow(qSeatOlder, k.room, k.name, rows[dedupKeep].seq, int64(seatOlderScan)).Scan(&n, &older); err != nil {
				return nil, err
			}
			l.older = older
			if n >= int64(seatOlderScan) {
				l.older = maxSeq
			}
		}
	} else {
		var last int64
		if err := t.queryRow(qRoomLast, k.room).Scan(&last); err != nil {
			return nil, err
		}
		if err := t.query(qSeatRecent, []any{k.room, k.name, max(last-int64(seatRecentScan), 0)}, each); err != nil {
			return nil, err
		}
		l.older = maxSeq // the seat has messages before these, their times not read
	}
	rows = rows[:min(len(rows), dedupKeep)]
	l.entries = make([]dedupEntry, len(rows))
	for i, e := range rows {
		l.entries[len(rows)-1-i] = e
		l.counted(e, 1)
	}
	return l, nil
}

// after tells whether the seat has fewer than n messages after seq, by what l and then extra
// (newer, oldest first) hold, when they can tell (known): when they hold n messages after
// it, or every message after it (the seat's messages are held from the latest back).
func (l *seatLog) after(extra []dedupEntry, seq int64, n int) (yes, known bool) {
	count, reached := 0, l.complete
	for _, es := range [2][]dedupEntry{l.entries, extra} {
		for _, e := range es {
			if e.seq > seq {
				count++
			} else {
				reached = true
			}
		}
	}
	switch {
	case count >= n:
		return false, true
	case reached:
		return true, true
	}
	return false, false
}

// duplicateTx is duplicate inside the committer's transaction, answered from memory when it
// can be: whether there is surely no repeat, and if there may be one, whether the seat's
// latest message with the hash is among its last n.
func (s *Store) duplicateTx(ctx context.Context, t txStmts, room, seat string, hash []byte, since time.Time, n int) (int64, error) {
	if len(hash) == 0 {
		return 0, nil
	}
	if !s.dedup.on {
		return duplicate(ctx, t, room, seat, hash, since, n, nil)
	}
	k := seatKey{room, seat}
	l, err := s.logOf(t.t, k)
	if err != nil {
		return 0, err
	}
	extra := t.t.b.dedup.added[k]
	if l.clear(extra, s.dedup.fingerprint(hash), !since.IsZero(), toMicros(since), n) {
		return 0, nil
	}
	return duplicate(ctx, t, room, seat, hash, since, n, func(seq int64) (bool, bool) { return l.after(extra, seq, n) })
}

// storedTx notes a message the batch stored, for the memory. A seat the memory has not read
// yet needs nothing: reading it later in the batch finds the message in the transaction.
func (s *Store) storedTx(t txStmts, room, seat string, seq int64, tm time.Time, hash []byte) {
	if !s.dedup.on {
		return
	}
	k := seatKey{room, seat}
	b := &t.t.b.dedup
	if b.loaded[k] == nil {
		s.dedup.mu.Lock()
		known := s.dedup.seats[k] != nil
		s.dedup.mu.Unlock()
		if !known {
			return
		}
	}
	if b.added == nil {
		b.added = map[seatKey][]dedupEntry{}
	}
	b.added[k] = append(b.added[k], dedupEntry{seq: seq, time: toMicros(tm), fp: s.dedup.fingerprint(hash)})
}

// committed moves what a batch read and stored into the memory, once it has committed.
func (s *Store) dedupCommitted(b *dedupBatch) {
	if !s.dedup.on || len(b.loaded) == 0 && len(b.added) == 0 {
		return
	}
	d := &s.dedup
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seats == nil {
		d.seats = map[seatKey]*seatLog{}
	}
	for k, l := range b.loaded {
		if old := d.seats[k]; old != nil {
			d.total -= len(old.entries)
		}
		d.seats[k] = l
		d.total += len(l.entries)
	}
	for k, es := range b.added {
		if len(es) == 0 {
			continue
		}
		if l := d.seats[k]; l != nil {
			d.total += l.add(es)
		}
	}
	for k, l := range d.seats {
		if d.total <= dedupMax {
			break
		}
		d.total -= len(l.entries)
		delete(d.seats, k)
	}
}

// forgetRoom drops the memory of a room's seats (after an import creates the room).
func (d *dedupMemory) forgetRoom(room string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, l := range d.seats {
		if k.room == room {
			d.total -= len(l.entries)
			delete(d.seats, k)
		}
	}
}

// maxSeq is larger than any seq.
const maxSeq = 1<<63 - 1
