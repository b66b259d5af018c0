package loadbench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/sqlite"
)

func TestGapless(t *testing.T) {
	for _, c := range []struct {
		seqs   []int64
		last   int64
		posted int
		want   string // "" = passes
	}{
		{[]int64{1, 2, 3}, 3, 3, ""},
		{nil, 0, 0, ""},
		{[]int64{1, 2, 4}, 4, 3, "a gap: no message 3 (the next is 4)"},
		{[]int64{2, 3}, 3, 2, "a gap: no message 1 (the next is 2)"},
		{[]int64{1, 2, 2, 3}, 3, 4, "seq 2 stored twice"},
		{[]int64{1, 3, 2}, 3, 3, "a gap: no message 2 (the next is 3)"},
		{[]int64{1, 2, 3}, 5, 3, "the room's last seq is 5 but it holds 3 messages"},
		{[]int64{1, 2, 3}, 3, 4, "4 posts were acknowledged but the room holds 3 messages"},
	} {
		err := gapless(c.seqs, c.last, c.posted)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("gapless(%v, %d, %d) = %v, want %q", c.seqs, c.last, c.posted, err, c.want)
		}
	}
}

// TestCheckSeqsFindsGap stores a room of seven messages on a real SQLite file, checks that
// the bench's seq check passes it, then deletes message 6 behind the store's back and checks
// that the seq check refuses the room.
func TestCheckSeqsFindsGap(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gap.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	arch := &parley.RoomArchive{Room: &parley.Room{Name: "gappy", CreatedAt: now}}
	for _, s := range []int64{1, 2, 3, 4, 5, 6, 7} {
		arch.Messages = append(arch.Messages, &parley.Message{Room: "gappy", Seq: s, Seat: "a", Time: now, Format: "text", Body: fmt.Sprint("m", s)})
	}
	if err := st.ImportRoom(ctx, arch); err != nil {
		t.Fatal(err)
	}
	if err := checkSeqs(ctx, st, "gappy", 7); err != nil {
		t.Fatalf("checkSeqs on 1..7: %v", err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DELETE FROM messages WHERE room = 'gappy' AND seq = 6`); err != nil {
		t.Fatal(err)
	}
	err = checkSeqs(ctx, st, "gappy", 7)
	if err == nil || !strings.Contains(err.Error(), "no message 6") {
		t.Fatalf("checkSeqs on 1..5,7 = %v, want the gap at 6", err)
	}
}
