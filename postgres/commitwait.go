package postgres

import (
	"time"
)

// The commit wait. A batch of appends to a room (group.go) costs two round trips, the room's
// lock held across them, statements PostgreSQL starts and a commit with its WAL flush, however
// many appends it carries. With several processes on one database each one's batches of a
// room are small (they take turns at the room's lock), so that fixed cost is paid for few
// posts. As on SQLite (sqlite/group.go), the room service tells the store of each post that
// passed authentication and is on its way to Append (PostsComing), with its room, and
// withdraws it when the post is refused or about to append; Append keeps it announced until
// its op is queued. A room's batch of appends that is not full, while posts to that room are
// announced, waits for them up to the bound (WithCommitWait; DefaultCommitWait unless set),
// taking each as it is queued. With none announced a batch begins at once: a lone post is not
// held, nor is a room's batch held for posts to another room.
//
// Nothing is answered before its commit, and seqs are given under the room's lock as before:
// only a batch's moment of BEGIN moves, by at most the bound.

// DefaultCommitWait is the bound of the commit wait unless WithCommitWait sets another. With
// two servers and twenty seats on one room, 3 ms was the best of the bounds measured while a
// batch took the room's lock before its checks (1, 3 and 5 ms: posts per second ×1.06, ×1.17
// and ×1.13 against none, alternated pairs): the appends that came while it waited for the
// lock joined it. A batch checked ahead of the lock (group.go) takes none after its checks, so
// the commit wait is what gathers them: 6 ms gave 2,094 posts a second against 3 ms's 1,928
// (medians of 6 alternated pairs, 5 won), 10 ms no more than 6 ms, and one server no fewer.
const DefaultCommitWait = 6 * time.Millisecond

// WithCommitWait bounds how long a room's batch of appends waits for posts announced on their
// way to the room (PostsComing): DefaultCommitWait unless set; 0 never waits.
func WithCommitWait(d time.Duration) Option {
	return func(s *Store) { s.commitWait = max(d, 0) }
}

// CommitWait is the bound of the commit wait this store was opened with.
func (s *Store) CommitWait() time.Duration { return s.commitWait }

// PostsComing announces (delta 1) a post on its way to Append in room, or withdraws (delta -1)
// one that will not call it after all, or is about to: Append announces itself until its op is
// queued. Every announcement must be withdrawn; the room service does it in a defer.
func (s *Store) PostsComing(room string, delta int) {
	s.comingMu.Lock()
	defer s.comingMu.Unlock()
	if n := s.coming[room] + delta; n > 0 {
		if s.coming == nil {
			s.coming = map[string]int{}
		}
		s.coming[room] = n
	} else {
		delete(s.coming, room)
	}
}

// comingTo tells whether posts to room are announced on their way.
func (s *Store) comingTo(room string) bool {
	s.comingMu.Lock()
	defer s.comingMu.Unlock()
	return s.coming[room] > 0
}
