package sqlite

// The committer's batch: what its writes leave for the end of the transaction. Once it has
// committed, the rooms it stored messages in go to the search index's indexer, which indexes
// them beside the committer, in a file of its own (searchfile.go).

// batch is what the writes of one transaction leave for its end.
type batch struct {
	search []roomCount // messages stored, for the search index, by room
	dedup  dedupBatch  // seats read and messages stored, for the dedup memory (dedup.go)
	seqs   seqBatch    // each room's last seq taken (seq.go)
	tails  []roomCount // each room's messages without their seat_index entries, once committed (seatindex.go)
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
	clear(b.dedup.loaded)
	for k, es := range b.dedup.added {
		if len(es) == 0 {
			delete(b.dedup.added, k) // a seat that did not post in the last batch
		} else {
			b.dedup.added[k] = es[:0]
		}
	}
	clear(b.seqs.last)
	clear(b.tails)
	b.tails = b.tails[:0]
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

// storedSome notes that the room got messages whose number the write did not count (an import).
func (b *batch) storedSome(room string) { b.stored(room, 1, 0) }
