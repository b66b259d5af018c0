package sqlite

import "fmt"

// A seat's messages are found through seat_index (migration 0008): for each message, its room,
// seat, the first 8 bytes of its hash, and its seq, in that order, so that a seat's entries
// are together and, within them, those of one hash. Every lookup of dedup goes through it.
//
// An index on messages in that order (what there was before) is written by every post, and
// each post of a seat other than the one before dirties another of its leaves: about one page
// written to the WAL per post, more than half of all a post wrote. So the committer writes a
// room's entries into seat_index not with each post but once seatIndexTail of the room's
// messages wait for theirs, all of them in one statement, in the transaction of the batch that
// reaches that number: a leaf then takes the entries of several posts of its seat, and a post
// writes a third of the pages it wrote (TestSeatIndexPages). seat_indexed holds each room's
// last seq written so (none: 0): every message of the room up to it has its entry, none after
// it has. A lookup reads seat_index and the room's messages after that seq (the tail) through
// the primary key; qSeatSeqs is a seat's seqs in both. Reading the tail costs 0.2 to 0.3 µs a
// message (BenchmarkDupLookup: a lookup by hash with 1,023 messages in the tail takes about 15
// times as long as with none, 230 µs against 15), and lookups run only when the committer's
// memory of the seat cannot answer (dedup.go).
//
// Without Sole (another process may write the file) the committer writes the entries of every
// batch's rooms with the batch, leaving no tail between transactions: it does not know how
// many the others left.

const (
	// qIndexedSeq is the room's (?1) last seq with its entry in seat_index.
	qIndexedSeq = `coalesce((SELECT seq FROM seat_indexed WHERE room = ?1), 0)`
	// qSeatSeqs is the seqs of the room's (?1) messages by seat ?2: the tail's first.
	qSeatSeqs = `SELECT seq FROM messages WHERE room = ?1 AND seq > ` + qIndexedSeq + ` AND seat = ?2
		UNION ALL SELECT seq FROM seat_index WHERE room = ?1 AND seat = ?2`
	// qIndexTail writes the entries of the room's tail into seat_index, and qIndexedTo
	// records that the room's messages up to its last have theirs.
	qIndexTail = `INSERT INTO seat_index (room, seat, h8, seq)
		SELECT room, seat, coalesce(substr(hash, 1, 8), x''), seq FROM messages
		WHERE room = ?1 AND seq > ` + qIndexedSeq
	qIndexedTo = `INSERT INTO seat_indexed (room, seq) VALUES (?1, (SELECT coalesce(max(seq), 0) FROM messages WHERE room = ?1))
		ON CONFLICT (room) DO UPDATE SET seq = excluded.seq`
)

// seatIndexTail is how many messages of a room may wait for their entries in seat_index (a
// variable for the tests). With 20 seats posting, each flush writes some 50 entries per seat.
var seatIndexTail = 1024

// seatIndexMemory is, for each room, how many of its messages wait for their entries (as far
// as the committer knows: those it stored since it last wrote the room's entries, or since
// Open, which it does not know; see tails). Only the committer uses it.
type seatIndexMemory struct {
	tail map[string]int
}

// indexSeats writes the entries of the batch's rooms whose tail has grown to seatIndexTail
// (every room of the batch without Sole, and a room whose tail the committer does not know
// yet), before COMMIT; the new tails go to b.tails, kept once the batch commits.
func (s *Store) indexSeats(t *rawTx) error {
	b := &t.b
	b.tails = b.tails[:0]
	for _, rc := range b.search {
		known, ok := s.seatIdx.tail[rc.room]
		// n 0: an import, whose messages were not counted.
		if s.dedup.on && ok && rc.n > 0 && known+rc.n < seatIndexTail {
			b.tails = append(b.tails, roomCount{rc.room, known + rc.n})
			continue
		}
		if _, err := t.exec(qIndexTail, rc.room); err != nil {
			return fmt.Errorf("seat index of room %s: %w", rc.room, err)
		}
		if _, err := t.exec(qIndexedTo, rc.room); err != nil {
			return fmt.Errorf("seat index of room %s: %w", rc.room, err)
		}
		b.tails = append(b.tails, roomCount{rc.room, 0})
	}
	return nil
}

// seatIndexCommitted keeps the tails of a batch that committed.
func (s *Store) seatIndexCommitted(b *batch) {
	if s.seatIdx.tail == nil {
		s.seatIdx.tail = map[string]int{}
	}
	for _, rc := range b.tails {
		s.seatIdx.tail[rc.room] = rc.n
	}
}
