package loadbench

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley"
)

// seqPage is how many messages checkSeqs reads at a time.
const seqPage = 1000

// checkSeqs reads every message of room from the store and checks that their seqs run
// 1, 2, … N without a gap or a repeat, that N is the room's last seq, and that N is posted,
// the number of posts acknowledged in it. Several server processes on one database each
// allocate seqs under the room's lock; a gap or a repeat would mean that lock failed.
func checkSeqs(ctx context.Context, store parley.Store, room string, posted int) error {
	var seqs []int64
	for after := int64(0); ; {
		page, err := store.Messages(ctx, room, after, seqPage)
		if err != nil {
			return fmt.Errorf("seq check of %s: %w", room, err)
		}
		for _, m := range page {
			seqs = append(seqs, m.Seq)
		}
		if len(page) < seqPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	last, err := store.LastSeq(ctx, room)
	if err != nil {
		return fmt.Errorf("seq check of %s: %w", room, err)
	}
	if err := gapless(seqs, last, posted); err != nil {
		return fmt.Errorf("seq check of %s: %w", room, err)
	}
	return nil
}

// gapless checks that seqs, in the order read, is 1..len(seqs), that the room's last seq is
// its length, and that the length is posted.
func gapless(seqs []int64, last int64, posted int) error {
	for i, s := range seqs {
		want := int64(i) + 1
		switch {
		case s == want:
		case i > 0 && s == seqs[i-1]:
			return fmt.Errorf("seq %d stored twice", s)
		case s > want:
			return fmt.Errorf("a gap: no message %d (the next is %d)", want, s)
		default:
			return fmt.Errorf("seq %d out of order at position %d", s, i+1)
		}
	}
	n := int64(len(seqs))
	if last != n {
		return fmt.Errorf("the room's last seq is %d but it holds %d messages", last, n)
	}
	if n != int64(posted) {
		return fmt.Errorf("%d posts were acknowledged but the room holds %d messages", posted, n)
	}
	return nil
}
