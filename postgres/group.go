package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlstore"
)

// Group commit. An append locks its room's row (rooms.last_seq) until it commits, and the
// commit waits for the WAL to be flushed, so the appends to one room are serialised across
// every process, each holder of the lock keeping it through its own flush. What a holder does
// while it holds the lock therefore bounds the room's posts per second, the more so when
// several processes take turns at it.
//
// So the appends of this process to one room that are waiting at the same moment form one
// batch, one transaction, and the batch holds the lock for two round trips:
//
//  1. BEGIN, lock the room's row (SELECT … FOR NO KEY UPDATE, which inserting seats, runs and
//     stats of the room does not wait for) in a statement that also reads the seats the
//     appends post as (Append.Poster) (qLock), every append's idempotency check, and the dedup checks of them all in one call (qChecks),
//     pipelined. The checks run after the lock, so they see every append to the room that
//     any process committed before it.
//  2. Here, in order: an append whose seat is revoked, gone or holds another token now is
//     refused (parley.PosterError); an append whose key the room already holds, or an
//     earlier append of the batch holds, is a replay; one whose body repeats an earlier
//     message, stored or of the batch, is refused; the others get the next seqs, one after
//     the other. Then their writes (every message in one INSERT from arrays, each with its
//     words for the search index, in one statement with the room's new last_seq and one
//     NOTIFY; then each append's lapse, asks and answers), and COMMIT, pipelined: the
//     commit's flush ends the round trip. A batch run a statement per append (below) inserts
//     each message alone and raises last_seq in a statement of its own.
//
// A write that fails (a lapsed ask no longer open, two asks on one line, a value PostgreSQL
// refuses) aborts the transaction: it is rolled back, its append gets its own error, and the
// batch starts again without it (when a statement for the whole batch failed, the dedup checks
// or the INSERT of every message, first again with one per append, to learn whose it was),
// from the lock, so that no seq is lost and every check sees what is now there. A batch with a
// lapse does not pipeline its COMMIT, since a lapse that finds its ask closed updates no row
// rather than failing. Nothing returns before its commit: the guarantee is the one of a
// transaction per append; only the lock and the flush are shared.
//
// A batch of plain appends (no asks opened, answered or lapsed, no two of one seat with one key
// or one body) is checked ahead of the lock instead (attemptAhead, migration 0011): its checks
// run first, without a transaction, and parley_append_batch then takes the lock, finds that no
// message of the batch's seats was stored since (so every check still holds), and stores the
// messages at the seqs after the room's last seq, then the commit, all in one round trip. The
// lock is then held while PostgreSQL runs that function and flushes the commit, not across two
// round trips and two wake-ups of this process. When a message of one of its seats was stored
// in between, it stores nothing and the batch runs again the usual way.
//
// A batch takes the appends already waiting. It waits for more only while posts to its room
// are announced on their way, up to a bound (the commit wait, commitwait.go), so a lone append
// is committed at once. The appends queued here while round trip 1 ran (many, when it waited
// for a lock that another process's batch held) join the batch (late joiners), with a round
// trip of their own checks under the lock before round trip 2: with two processes on one room,
// each batch otherwise held only what had queued before its wait began, and the rest waited a
// whole turn of the lock more.

// maxBatch bounds one transaction.
const maxBatch = 64

// lateJoiners lets a batch take in the appends queued while it waited for the room's lock
// (attempt). A variable for the tests, which run batches both ways.
var lateJoiners = true

// groupOp is one append waiting for its room's batch.
type groupOp struct {
	ctx  context.Context
	a    *parley.Append
	m    parley.Message
	out  parley.Appended
	err  error
	done chan struct{}

	// Set by each attempt of the batch.
	orig   *parley.Message // the stored message with this key, if any
	dup    dupCheck
	seq    int64   // 0 unless the attempt stores the append
	notes  string  // its notes as JSON, when it stores the append
	words  *string // its body as text for its words (wordsText), when it stores the append
	args   []any   // of its own INSERT (qInsertMessage), when it stores the append a row at a time
	failed bool    // refused (err set)
}

// group runs one append in its room's next batch and waits for it. Once queued an append
// always runs or fails with its context's error, before its batch commits.
// queued, when not nil, is set as the op is queued, its announcement (Append's) withdrawn.
func (s *Store) group(ctx context.Context, a *parley.Append, m parley.Message, queued *bool) (parley.Appended, error) {
	if err := ctx.Err(); err != nil {
		return parley.Appended{}, err
	}
	o := &groupOp{ctx: ctx, a: a, m: m, done: make(chan struct{})}
	if queued != nil {
		// Withdrawn just before it is queued: a batch held for the room is woken by the
		// queueing, and then finds it and no announcement left for it.
		*queued = true
		s.PostsComing(m.Room, -1)
	}
	s.groups.add(m.Room, o, maxBatch, s.commitBatch)
	<-o.done
	return o.out, o.err
}

// commitBatch stores a batch of appends to room and answers each.
func (s *Store) commitBatch(room string, batch []*groupOp) {
	defer func() {
		for _, o := range batch {
			close(o.done)
		}
	}()
	ctx := context.Background()
	live := make([]*groupOp, 0, len(batch))
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			continue
		}
		live = append(live, o)
	}
	if len(live) == 0 {
		return
	}
	// When the transaction fails as a whole, every answer computed in it fails with it: a
	// replay or a duplicate found there may name a sibling's message that was never stored.
	fail := func(err error) {
		for _, o := range live {
			o.out, o.err = parley.Appended{}, err
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		fail(fmt.Errorf("append: %w", err))
		return
	}
	// A connection left inside a transaction by an error below is closed by the pool.
	defer conn.Release()
	// more takes up to n appends queued for the room since the batch began (late joiners,
	// see attempt); each one taken is answered with the batch.
	more := func(n int) []*groupOp {
		var late []*groupOp
		for _, o := range s.groups.take(room, n) {
			batch = append(batch, o)
			if err := o.ctx.Err(); err != nil {
				o.err = err
				continue
			}
			late = append(late, o)
		}
		live = append(live, late...)
		return late
	}
	perRow := false
	for len(live) > 0 {
		last, bad, err := s.attempt(ctx, conn, room, live, perRow, more)
		if errors.Is(err, errPerRow) && !perRow {
			// A statement for the whole batch (its dedup checks, its INSERT of every
			// message) failed: again, a statement per append, to find the append whose
			// values PostgreSQL refuses.
			if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
				fail(fmt.Errorf("append: rollback: %w", err))
				return
			}
			perRow = true
			continue
		}
		if err != nil {
			conn.Exec(ctx, `ROLLBACK`) // best effort; Release closes a connection still in a transaction
			fail(err)
			return
		}
		if bad == nil {
			if last > 0 {
				// This process's watchers need not wait for the notification.
				s.watch.Publish(room, last)
			}
			return
		}
		// bad failed alone: the batch starts again without it.
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			fail(fmt.Errorf("append: after %w: rollback: %w", bad.err, err)) // both: a full disk stays recognisable
			return
		}
		bad.out = parley.Appended{}
		live = slices.DeleteFunc(live, func(o *groupOp) bool { return o == bad })
	}
}

// checkAhead lets a batch of plain appends run its checks before it takes the room's lock
// (attemptAhead). A variable for the tests, which run batches both ways.
var checkAhead = true

// aheadHook, when not nil (the tests), runs between the checks and the writes of a batch
// checked ahead of the lock.
var aheadHook func(room string)

// aheadOK reports whether ops can be checked ahead of the room's lock: none opens, answers or
// lapses an ask (their statements name the batch's seqs, which are known only under the lock),
// and no two of one seat share an idempotency key or a hash (the answer of the later would
// name the seq of the earlier).
func aheadOK(ops []*groupOp) bool {
	for i, o := range ops {
		if o.a.Lapses != nil || len(o.a.Asks) > 0 || len(o.a.Answers) > 0 {
			return false
		}
		for _, p := range ops[:i] {
			if p.m.Seat != o.m.Seat {
				continue
			}
			if o.m.IdempotencyKey != "" && p.m.IdempotencyKey == o.m.IdempotencyKey {
				return false
			}
			if len(o.m.Hash) > 0 && bytes.Equal(p.m.Hash, o.m.Hash) {
				return false
			}
		}
	}
	return true
}

// qAppendBatch stores the appends of a batch checked ahead of the lock (migration 0011): $1
// the room, $2 the batch's seats, $3 the room's last seq when the checks ran, $4 the
// notification's channel, then qInsertMessages' arrays from $2 on, as messageArrays makes them.
const qAppendBatch = `SELECT parley_append_batch($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`

// attemptAhead runs the batch with its checks ahead of the room's lock, in two round trips:
//
//  1. Without a transaction, the room's last seq and the posters' seats (qPeek), each append's
//     idempotency check and the dedup checks of them all, as under the lock.
//  2. The decisions made from them (decideAll) are sent to parley_append_batch, which takes
//     the lock, finds that no message of the batch's seats was stored since the checks (so
//     every check still holds), stores the messages at the seqs that follow the room's last
//     seq then, raises it and notifies; then COMMIT, pipelined.
//
// The room's lock is held only from the function's start to the commit's flush, never across a
// round trip. done is false, with nothing stored, when the batch must run the usual way
// (attempt) instead: a statement failed for one append (its values, which the usual way finds),
// the room is gone, or a message of one of the batch's seats was stored between the checks and
// the lock.
func (s *Store) attemptAhead(ctx context.Context, conn *pgxpool.Conn, room string, ops []*groupOp) (last int64, done bool, err error) {
	seen, seats, found, bad, err := s.checkRound(ctx, conn, room, ops, postersOf(ops), false, roundAhead)
	switch {
	case errors.Is(err, errPerRow):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	case bad != nil || !found:
		return 0, false, nil
	}
	stored, next, _ := decideAll(room, ops, seats, seen, false)
	if len(stored) == 0 {
		return 0, true, nil // every append a replay or refused: nothing to write
	}
	if aheadHook != nil {
		aheadHook(room)
	}
	var seatNames []string
	for _, o := range ops {
		if !slices.Contains(seatNames, o.m.Seat) {
			seatNames = append(seatNames, o.m.Seat)
		}
	}
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(qAppendBatch, append([]any{room, seatNames, seen, channel}, messageArrays(room, stored)[1:]...)...)
	b.Queue(`COMMIT`)
	br := conn.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return 0, false, fmt.Errorf("append: %w", err)
	}
	var base *int64
	if err := br.QueryRow().Scan(&base); err != nil {
		br.Close()
		if !isStatementError(err) {
			return 0, false, fmt.Errorf("append: %w", err)
		}
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			return 0, false, fmt.Errorf("append: rollback: %w", err)
		}
		return 0, false, nil
	}
	if _, err := br.Exec(); err != nil {
		br.Close()
		return 0, false, fmt.Errorf("append: commit: %w", err)
	}
	if err := br.Close(); err != nil {
		return 0, false, fmt.Errorf("append: %w", err)
	}
	if base == nil || *base < 0 {
		return 0, false, nil // the room is gone, or the checks no longer hold: committed nothing
	}
	shift := *base - seen
	for _, o := range stored {
		o.seq += shift
		o.out = parley.Appended{Message: sqlstore.Stored(o.m, o.seq)}
	}
	return next + shift, true, nil
}

// stmtOwner tells which append a statement of a pipeline belongs to (nil: the batch's own).
type stmtOwner struct {
	op       *groupOp
	lapse    bool
	asks     bool
	messages bool // the batch's INSERT of every message (qInsertMessages)
	checks   bool // the batch's dedup checks (qChecks)
}

// errPerRow is attempt's answer when a statement for every append of the batch (the INSERT of
// every message, the dedup checks) failed for one of them: the batch runs again with a
// statement per append, which names it.
var errPerRow = errors.New("an append of the batch was refused")

// attempt runs the batch once. It returns the room's new last seq after a commit (0 when
// nothing was stored and the transaction was rolled back), or the append whose write failed
// alone (bad, with its error set; the transaction is then aborted or open and must be rolled
// back), or an error that fails the whole batch.
func (s *Store) attempt(ctx context.Context, conn *pgxpool.Conn, room string, ops []*groupOp, perRow bool, more func(n int) []*groupOp) (last int64, bad *groupOp, err error) {
	reset(ops)
	if checkAhead && !perRow && aheadOK(ops) {
		last, done, err := s.attemptAhead(ctx, conn, room, ops)
		if done || err != nil {
			return last, nil, err
		}
		s.aheadAgain.Add(1)
		reset(ops) // and again the usual way, the checks under the lock
	}

	// Round trip 1: the lock and the checks.
	last, seats, found, bad, err := s.checkRound(ctx, conn, room, ops, postersOf(ops), perRow, roundFirst)
	if err != nil || bad != nil {
		return 0, bad, err
	}
	if !found {
		for _, o := range ops {
			o.err = sqlstore.RoomNotFound(room)
		}
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			return 0, nil, fmt.Errorf("append: rollback: %w", err)
		}
		return 0, nil, nil
	}
	// Late joiners: the appends to the room queued in this process while the first round trip
	// ran (most when it waited for a lock another process's batch held) join this batch, with
	// their checks in one more round trip under the lock, rather than wait for the lock again
	// in a batch of their own.
	if !perRow && lateJoiners && len(ops) < maxBatch {
		if late := more(maxBatch - len(ops)); len(late) > 0 {
			reset(late)
			ops = append(ops[:len(ops):len(ops)], late...)
			if _, seats, _, bad, err = s.checkRound(ctx, conn, room, late, postersOf(ops), false, roundLate); err != nil || bad != nil {
				return 0, bad, err
			}
		}
	}

	stored, next, lapses := decideAll(room, ops, seats, last, perRow)
	if len(stored) == 0 {
		if _, err := conn.Exec(ctx, `ROLLBACK`); err != nil {
			return 0, nil, fmt.Errorf("append: rollback: %w", err)
		}
		return 0, nil, nil
	}

	// Round trip 2: the writes and, unless a lapse must be checked first, the commit.
	b := &pgx.Batch{}
	var owners []stmtOwner
	multi := !perRow
	if multi {
		// Every message in one statement, with the room's new last seq and its
		// notification: the asks, lapses and answers below come after it, in the batch's
		// order, as they would after each message alone (a lapse or an answer names asks
		// by seq, and an ask needs its message first). The notification is delivered to
		// every listener when, and only if, the transaction commits, and watchers want the
		// room's last seq, so one says it for the whole batch.
		b.Queue(qInsertMessagesSeq, append(messageArrays(room, stored), next, channel, payload(room, next))...)
		owners = append(owners, stmtOwner{messages: true})
	}
	for _, o := range stored {
		if o.a.Lapses != nil {
			b.Queue(sqlstore.QueryLapse, sqlstore.LapseArgs(o.a, o.seq, room)...)
			owners = append(owners, stmtOwner{op: o, lapse: true})
		}
		if !multi {
			b.Queue(qInsertMessage, o.args...)
			owners = append(owners, stmtOwner{op: o})
		}
		for _, ask := range o.a.Asks {
			b.Queue(sqlstore.QueryInsertAsk, sqlstore.OpenAsk(dialect{}, ask, &o.m, o.seq)...)
			owners = append(owners, stmtOwner{op: o, asks: true})
		}
		if len(o.a.Answers) > 0 {
			b.Queue(qAnswer, parley.AskAnswered, o.seq, room, o.a.Answers, parley.AskOpen, o.m.Seat)
			owners = append(owners, stmtOwner{op: o})
		}
	}
	if !multi {
		// The room's new last seq, and its notification in the same statement.
		b.Queue(qLastSeq, room, next, channel, payload(room, next))
		owners = append(owners, stmtOwner{})
	}
	if !lapses {
		b.Queue(`COMMIT`)
		owners = append(owners, stmtOwner{})
	}
	br := conn.SendBatch(ctx, b)
	var lapsed *groupOp
	for i := range owners {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			ow := owners[i]
			if ow.messages && isStatementError(err) {
				return 0, nil, fmt.Errorf("append: %w: %w", errPerRow, err)
			}
			if ow.op == nil || !isStatementError(err) {
				if i == len(owners)-1 && !lapses {
					return 0, nil, fmt.Errorf("append: commit: %w", err)
				}
				return 0, nil, fmt.Errorf("append: %w", err)
			}
			o := ow.op
			switch {
			case ow.asks && sqlState(err) == uniqueViolation:
				o.err = parley.Errorf(parley.EINVALID, "two asks on one line")
			case ow.lapse:
				o.err = fmt.Errorf("append: lapse ask: %w", err)
			default:
				o.err = fmt.Errorf("append: %w", err)
			}
			o.failed = true
			return 0, o, nil
		}
		if owners[i].lapse && tag.RowsAffected() == 0 && lapsed == nil {
			lapsed = owners[i].op
		}
	}
	if err := br.Close(); err != nil {
		return 0, nil, fmt.Errorf("append: %w", err)
	}
	if lapses {
		if lapsed != nil {
			lapsed.err, lapsed.failed = sqlstore.AskNotOpen(lapsed.a.Lapses.Seq, lapsed.a.Lapses.Line), true
			return 0, lapsed, nil
		}
		if _, err := conn.Exec(ctx, `COMMIT`); err != nil {
			return 0, nil, fmt.Errorf("append: commit: %w", err)
		}
	}
	for _, o := range stored {
		o.out = parley.Appended{Message: sqlstore.Stored(o.m, o.seq)}
	}
	return next, nil, nil
}

// decideAll decides each of ops, in the batch's order, as if each append ran alone after the
// ones before it, from the checks and the seats read in the batch's first round trip and the
// room's last seq then. It returns the appends to store, numbered on from last (with their
// notes, words, and with perRow their own INSERT's arguments), the last of their seqs, and
// whether one of them lapses an ask.
func decideAll(room string, ops []*groupOp, seats seatStates, last int64, perRow bool) (stored []*groupOp, next int64, lapses bool) {
	next = last
	for _, o := range ops {
		if o.a.Poster != nil {
			if err := seats.check(room, o.a.Poster); err != nil {
				o.err, o.failed = err, true
				continue
			}
		}
		decide(o, stored)
		if o.failed || o.out.Replay {
			continue
		}
		notes, err := sqlstore.MarshalNotes(o.m.Notes)
		if err != nil {
			o.err, o.failed = fmt.Errorf("append: %w", err), true
			continue
		}
		words := wordsText(o.m.Body)
		if perRow {
			// Only a batch run a row at a time inserts each message with its own
			// arguments; the shared INSERT takes the fields themselves (messageArrays).
			args, err := sqlstore.MessageArgs(dialect{}, &o.m, next+1)
			if err != nil {
				o.err, o.failed = err, true
				continue
			}
			o.args = append(args, words)
		}
		next++
		o.seq, o.notes, o.words = next, notes, words
		stored = append(stored, o)
		lapses = lapses || o.a.Lapses != nil
	}
	return stored, next, lapses
}

// qLock locks the room's row (its last seq, $1) and reads the seats named in $2 (the batch's
// posters): their names, whether each is revoked, and their token hashes, in three arrays
// (NULL when there are none). The seats are read from the statement's snapshot, taken before
// it waits for the lock: a revocation or rotation committed before the batch began is seen.
//
// The transaction keeps PostgreSQL's own choice between custom and generic plans. Forcing
// generic plans for the whole transaction once saved planning the dedup checks on every batch,
// but a generic plan made while the room held a few hundred messages read the (room, topic, seq)
// index and filtered the hash over the whole room, under the room's lock, until the plan was
// dropped (TestDuplicateQueryPlanSmallTable). The checks now run in parley_dedup_checks
// (migration 0010), whose settings make the one plan it keeps safe.
const qLock = qPeek + ` FOR NO KEY UPDATE OF r`

// qPeek is qLock without the lock: the room's last seq and the seats, for a batch checked
// ahead of the lock (attemptAhead).
const qPeek = `SELECT r.last_seq, s.names, s.revoked, s.hashes
	FROM rooms r LEFT JOIN LATERAL (SELECT array_agg(name) names, array_agg(revoked_at IS NOT NULL) revoked,
		array_agg(token_hash) hashes FROM seats WHERE room = $1 AND name = ANY($2)) s ON true
	WHERE r.name = $1`

// postersOf are the names of the seats that the batch's appends post as (Append.Poster), each
// once, or nil.
func postersOf(ops []*groupOp) []string {
	var names []string
	for _, o := range ops {
		if p := o.a.Poster; p != nil && !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	return names
}

// seatStates are qLock's seats.
type seatStates struct {
	names   []string
	revoked []bool
	hashes  [][]byte
}

// check is parley.PosterError for a seat that posts as want.
func (s *seatStates) check(room string, want *parley.Seat) error {
	i := slices.Index(s.names, want.Name)
	if i < 0 || i >= len(s.revoked) || i >= len(s.hashes) {
		return parley.PosterError(room, want, nil)
	}
	cur := &parley.Seat{Room: room, Name: want.Name, TokenHash: s.hashes[i]}
	if s.revoked[i] {
		cur.RevokedAt = new(time.Time) // revoked; when does not matter here
	}
	return parley.PosterError(room, want, cur)
}

// qLastSeq raises the room's last seq to $2 and notifies $3 with $4. A data-modifying WITH runs
// whether or not the query reads it.
const qLastSeq = `WITH raise AS (UPDATE rooms SET last_seq = $2 WHERE name = $1)
	SELECT pg_notify($3, $4)`

// qInsertMessage is sqlstore.QueryInsertMessage with the message's words (migration 0007)
// computed from $14, the body as text, or left to the trigger when $14 is NULL.
const qInsertMessage = `INSERT INTO messages
	(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key, words)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, to_tsvector('simple'::regconfig, $14::text))`

// qInsertMessages inserts the messages of a batch in one statement, from one array per column
// (messageArrays): the same rows as qInsertMessage for each, in seq order. One statement
// instead of one per message saves PostgreSQL starting an INSERT (six indexes, a foreign key,
// a trigger) for each.
const qInsertMessages = `INSERT INTO messages
	(room, seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, idempotency_key, words)
	SELECT $1, m.seq, m.seat, m.time, m.format, m.topic, m.intent, m.re, m.body, m.tokens, m.hash, m.notes, m.key,
		to_tsvector('simple'::regconfig, m.words)
	FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[], $7::text[], $8::bigint[],
		$9::bytea[], $10::integer[], $11::bytea[], $12::json[], $13::text[], $14::text[])
		AS m(seq, seat, time, format, topic, intent, re, body, tokens, hash, notes, key, words)`

// qInsertMessagesSeq is qInsertMessages and qLastSeq in one statement ($15 the room's new last
// seq, $16 and $17 the notification), so that PostgreSQL starts one statement for them, not two.
// A data-modifying WITH runs whether or not the query reads it.
const qInsertMessagesSeq = `WITH ins AS (` + qInsertMessages + `),
	raise AS (UPDATE rooms SET last_seq = $15 WHERE name = $1)
	SELECT pg_notify($16, $17)`

// messageArrays are qInsertMessages' arguments for the stored appends of a batch, from each
// one's message, seq, notes and words as attempt decided them.
func messageArrays(room string, ops []*groupOp) []any {
	n := len(ops)
	seqs, res := make([]int64, n), make([]int64, n)
	seats, formats, topics, intents, notes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	times := make([]time.Time, n)
	bodies, hashes := make([][]byte, n), make([][]byte, n)
	tokens := make([]int32, n)
	keys, words := make([]*string, n), make([]*string, n)
	for i, o := range ops {
		m := &o.m
		seqs[i], seats[i], times[i], formats[i], topics[i], intents[i], res[i] = o.seq, m.Seat, m.Time, m.Format, m.Topic, m.Intent, m.Re
		bodies[i], tokens[i] = []byte(m.Body), int32(m.Tokens)
		if len(m.Hash) > 0 {
			hashes[i] = m.Hash
		}
		notes[i] = o.notes
		if m.IdempotencyKey != "" {
			keys[i] = &m.IdempotencyKey
		}
		words[i] = o.words
	}
	return []any{room, seqs, seats, times, formats, topics, intents, res, bodies, tokens, hashes, notes, keys, words}
}

// wordsText is the body as qInsertMessage's text: the body itself when it is UTF-8 without NUL,
// as parley_body_text reads it, or nil (NULL) for the trigger to read it.
func wordsText(body string) *string {
	if !utf8.ValidString(body) || strings.IndexByte(body, 0) >= 0 {
		return nil
	}
	return &body
}

const qAnswer = `UPDATE asks SET state = $1, closed_by = $2
	WHERE room = $3 AND seq = ANY($4) AND state = $5 AND (to_seat = $6 OR to_seat = 'all')`

// decide answers o from the checks run under the lock and the appends of the batch before it
// that this attempt stores (stored), as the store would have had o run alone after them: a
// replay of a key stored or stored earlier in the batch, or a refused repeat, or neither
// (o.out and o.err unset, o.failed false).
func decide(o *groupOp, stored []*groupOp) {
	if key := o.m.IdempotencyKey; key != "" {
		if o.orig != nil {
			o.out = parley.Appended{Message: o.orig, Replay: true}
			return
		}
		for _, p := range stored {
			if p.m.Seat == o.m.Seat && p.m.IdempotencyKey == key {
				o.out = parley.Appended{Message: sqlstore.Stored(p.m, p.seq), Replay: true}
				return
			}
		}
	}
	if !wantDuplicate(o.m.Hash, o.a.DedupSince, o.a.DedupLast) {
		return
	}
	// The seat's messages stored earlier in the batch come after every stored one: they
	// count among its last N, and a copy among them is the latest.
	var mine []*groupOp
	for _, p := range stored {
		if p.m.Seat == o.m.Seat {
			mine = append(mine, p)
		}
	}
	n := o.a.DedupLast
	dup := o.dup.seq(n, len(mine))
	for i, p := range mine {
		if !bytes.Equal(p.m.Hash, o.m.Hash) {
			continue
		}
		inWindow := !o.a.DedupSince.IsZero() && p.m.Time.After(o.a.DedupSince)
		inLast := n > 0 && len(mine)-1-i < n
		if inWindow || inLast {
			dup = max(dup, p.seq)
		}
	}
	if dup != 0 {
		o.err, o.failed = sqlstore.DuplicateError(dup), true
	}
}

// isStatementError reports whether err is PostgreSQL refusing a statement (its values, a
// constraint), as opposed to the connection failing: an error that one append's statement
// caused and that the batch can go on without.
func isStatementError(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code[:2] {
	case "22", "23": // data exception, integrity constraint violation
		return true
	}
	return false
}

// dupCheck is what qCheck finds of a seat's earlier messages with a hash.
type dupCheck struct {
	window int64 // the latest seq of a copy posted after since, or 0
	latest int64 // the latest copy's seq when the last N are checked, or 0
	after  int64 // the seat's messages after latest, counted up to N
}

// seq is the seq the repeat points at, or 0, when the seat has posted extra messages since
// the check (messages of the same batch, stored after every one the check saw).
func (d dupCheck) seq(n, extra int) int64 {
	dup := d.window
	if n > 0 && d.latest > 0 && d.after+int64(extra) < int64(n) {
		dup = max(dup, d.latest)
	}
	return dup
}

// qCheck finds, of the seat's messages with hash $3: the latest posted after $4 (when not
// null); the latest (when $5 > 0), and how many of the seat's messages follow it, up to $5.
//
// Each lookup of the hash must read the (room, seat, hash, seq) index backwards and stop at
// its first row. Written hash = $3, it would leave the planner a tie whenever the table's
// statistics are missing or stale (a new database, the first minute of a busy one): every
// equality's default selectivity brings both indexes down to one row, and the smaller
// (room, seat, seq) index wins, filtering the hash over every message of the seat, under the
// room's lock. hash >= $3 AND hash <= $3 is the same test on bytea, but not an equality, so
// the ORDER BY on the hash is one that only the hash index gives without a sort
// (TestDuplicateQueryPlan).
const qCheck = `SELECT
	coalesce((SELECT seq FROM messages
		WHERE $4::timestamptz IS NOT NULL AND room = $1 AND seat = $2 AND hash >= $3 AND hash <= $3 AND time > $4
		ORDER BY hash DESC, seq DESC LIMIT 1), 0),
	coalesce(h.seq, 0),
	(SELECT count(*) FROM (SELECT 1 FROM messages WHERE room = $1 AND seat = $2 AND seq > h.seq LIMIT $5) after)
FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT seq FROM messages
	WHERE $5 > 0 AND room = $1 AND seat = $2 AND hash >= $3 AND hash <= $3
	ORDER BY hash DESC, seq DESC LIMIT 1) h ON true`

// qChecks is qCheck for several appends in one call (migration 0010): one row for each element
// of the arrays ($2 seats, $3 hashes, $4 since or NULL, $5 last N), each with its 1-based place
// among them. The function plans its lookups once per connection, each on the index qCheck
// reads (TestDuplicateQueryPlan, TestDuplicateQueryPlanSmallTable).
const qChecks = `SELECT nth, window_seq, latest_seq, after_latest FROM parley_dedup_checks($1, $2, $3, $4, $5)`

func checksArgs(room string, ops []*groupOp) []any {
	seats := make([]string, len(ops))
	hashes := make([][]byte, len(ops))
	since := make([]*time.Time, len(ops))
	ns := make([]int64, len(ops))
	for i, o := range ops {
		args := duplicateArgs(room, o.m.Seat, o.m.Hash, o.a.DedupSince, o.a.DedupLast)
		seats[i], hashes[i], since[i], ns[i] = o.m.Seat, o.m.Hash, args[3].(*time.Time), args[4].(int64)
	}
	return []any{room, seats, hashes, since, ns}
}

// readChecks reads qChecks' rows into the ops' dup: each row names its op by its place.
func readChecks(br pgx.BatchResults, ops []*groupOp) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := make([]bool, len(ops))
	n := 0
	for rows.Next() {
		var nth int64
		var d dupCheck
		if err := rows.Scan(&nth, &d.window, &d.latest, &d.after); err != nil {
			return err
		}
		if nth < 1 || nth > int64(len(ops)) || seen[nth-1] {
			return fmt.Errorf("a row for check %d of %d, unexpected", nth, len(ops))
		}
		seen[nth-1] = true
		ops[nth-1].dup = d
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != len(ops) {
		return fmt.Errorf("%d rows for %d checks", n, len(ops))
	}
	return nil
}

// wantDuplicate reports whether there is anything to check for a repeat.
func wantDuplicate(hash []byte, since time.Time, n int) bool {
	return len(hash) > 0 && (!since.IsZero() || n > 0)
}

func duplicateArgs(room, seat string, hash []byte, since time.Time, n int) []any {
	var sinceArg *time.Time
	if !since.IsZero() {
		sinceArg = &since
	}
	return []any{room, seat, hash, sinceArg, int64(max(n, 0))}
}

// reset clears what an earlier attempt of the batch set on each op.
func reset(ops []*groupOp) {
	for _, o := range ops {
		o.orig, o.dup, o.seq, o.notes, o.words, o.args, o.failed, o.out, o.err = nil, dupCheck{}, 0, "", nil, nil, false, parley.Appended{}, nil
	}
}

// checkRoundKind is which of its round trips a batch's checks are.
type checkRoundKind int

const (
	roundFirst checkRoundKind = iota // BEGIN, the room's lock (qLock) and the checks
	roundLate                        // the lock, held already (qLock again), and the late joiners' checks
	roundAhead                       // no transaction and no lock: the room's last seq (qPeek) and the checks
)

// checkRound is one round trip of checks for ops: with roundFirst, BEGIN first; then the
// room's lock, which also reads the seats named in posters (qLock: in a transaction that holds
// the lock already, it reads them again and returns the same last seq; with roundAhead, qPeek,
// which reads the same without the lock); then each op's
// idempotency check and the dedup checks of them all (one per op with perRow). found is false
// when the room does not exist. A statement that failed for one op names it (bad, with its
// error set); errPerRow when the shared dedup checks failed.
func (s *Store) checkRound(ctx context.Context, conn *pgxpool.Conn, room string, ops []*groupOp, posters []string, perRow bool, round checkRoundKind) (last int64, seats seatStates, found bool, bad *groupOp, err error) {
	b := &pgx.Batch{}
	var owners []stmtOwner
	begin := round == roundFirst
	if begin {
		b.Queue(`BEGIN`)
		owners = append(owners, stmtOwner{})
	}
	if round == roundAhead {
		b.Queue(qPeek, room, posters)
	} else {
		b.Queue(qLock, room, posters)
	}
	owners = append(owners, stmtOwner{})
	for _, o := range ops {
		if o.m.IdempotencyKey != "" {
			b.Queue(qByKey, room, o.m.Seat, o.m.IdempotencyKey)
			owners = append(owners, stmtOwner{op: o})
		}
		if perRow && wantDuplicate(o.m.Hash, o.a.DedupSince, o.a.DedupLast) {
			b.Queue(qCheck, duplicateArgs(room, o.m.Seat, o.m.Hash, o.a.DedupSince, o.a.DedupLast)...)
			owners = append(owners, stmtOwner{op: o})
		}
	}
	// Every dedup check in one statement, unless the batch runs a row at a time.
	var checked []*groupOp
	if !perRow {
		for _, o := range ops {
			if wantDuplicate(o.m.Hash, o.a.DedupSince, o.a.DedupLast) {
				checked = append(checked, o)
			}
		}
		if len(checked) > 0 {
			b.Queue(qChecks, checksArgs(room, checked)...)
			owners = append(owners, stmtOwner{checks: true})
		}
	}
	br := conn.SendBatch(ctx, b)
	i := 0
	stmtErr := func(err error) (int64, seatStates, bool, *groupOp, error) {
		br.Close()
		if owners[i].checks && isStatementError(err) {
			return 0, seatStates{}, false, nil, fmt.Errorf("append: %w: %w", errPerRow, err)
		}
		if o := owners[i].op; o != nil && isStatementError(err) {
			o.err = fmt.Errorf("append: %w", err)
			return 0, seatStates{}, false, o, nil
		}
		return 0, seatStates{}, false, nil, fmt.Errorf("append: %w", err)
	}
	if begin {
		if _, err := br.Exec(); err != nil {
			return stmtErr(err)
		}
		i++
	}
	if err := br.QueryRow().Scan(&last, &seats.names, &seats.revoked, &seats.hashes); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			if err := br.Close(); err != nil {
				return 0, seatStates{}, false, nil, fmt.Errorf("append: %w", err)
			}
			return 0, seatStates{}, false, nil, nil
		}
		return stmtErr(err)
	}
	for _, o := range ops {
		if o.m.IdempotencyKey != "" {
			i++
			orig, err := sqlstore.ScanMessage(br.QueryRow())
			switch {
			case err == nil:
				o.orig = orig
			case !errors.Is(err, pgx.ErrNoRows):
				return stmtErr(fmt.Errorf("idempotency key: %w", err))
			}
		}
		if perRow && wantDuplicate(o.m.Hash, o.a.DedupSince, o.a.DedupLast) {
			i++
			if err := br.QueryRow().Scan(&o.dup.window, &o.dup.latest, &o.dup.after); err != nil {
				return stmtErr(fmt.Errorf("dedup: %w", err))
			}
		}
	}
	if len(checked) > 0 {
		i++
		if err := readChecks(br, checked); err != nil {
			return stmtErr(fmt.Errorf("dedup: %w", err))
		}
	}
	if err := br.Close(); err != nil {
		return 0, seatStates{}, false, nil, fmt.Errorf("append: %w", err)
	}
	return last, seats, true, nil, nil
}
