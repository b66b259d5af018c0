package room

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley"
)

// schedulerPoll is the longest the scheduler sleeps: asks opened by another server process on
// the same database do not nudge this one, so it looks again at least this often.
const schedulerPoll = 30 * time.Second

// nudge wakes the scheduler so it re-reads the next due time (a new ask may be due sooner).
func (s *Service) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RunScheduler lapses due asks until ctx ends: at start (asks are in the store, so a restart
// picks up where it left off), at each ask's due time, after every post that opens an ask with
// a time, and at least every 30 seconds.
func (s *Service) RunScheduler(ctx context.Context) {
	defer func() {
		// Write what the counters gathered, even though ctx has ended.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		s.flushStats(ctx)
	}()
	for {
		_, err := s.LapseDue(ctx)
		if ctx.Err() != nil {
			return
		}
		s.flushStats(ctx)
		wait := schedulerPoll
		if err != nil {
			s.log.ErrorContext(ctx, "room: scheduler", "err", err)
			wait = 5 * time.Second
		} else if next, err := s.store.NextDue(ctx); err != nil {
			s.log.ErrorContext(ctx, "room: scheduler: next due", "err", err)
			wait = 5 * time.Second
		} else if !next.IsZero() {
			wait = min(wait, max(next.Sub(s.now()), 0))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// LapseDue posts, for every open ask whose time has passed, a message from the seat `room`
// that applies the ask's default or says it lapsed, and closes the ask. It returns how many
// it closed. The store closes each ask only if it is still open, so two server processes
// never post the same lapse twice: the loser gets ECONFLICT and skips.
func (s *Service) LapseDue(ctx context.Context) (int, error) {
	due, err := s.store.DueAsks(ctx, s.now())
	if err != nil {
		return 0, fmt.Errorf("due asks: %w", err)
	}
	n := 0
	for _, ask := range due {
		body := lapseBody(ask)
		msg := &parley.Message{
			Room: ask.Room, Seat: parley.SystemSeat, Time: s.now().UTC(), Format: parley.FormatConvention,
			Topic: lapseTopic(ask), Intent: "note", Re: ask.Seq, Body: body,
			Tokens: s.tok.Count(body), Hash: hashBody(body),
		}
		_, err := s.appendTimed(ctx, &parley.Append{Message: msg, Lapses: ask})
		switch {
		case parley.ErrorCode(err) == parley.ECONFLICT:
			continue // answered meanwhile, or another process lapsed it first
		case err != nil:
			return n, fmt.Errorf("lapse ask #%d line %d in room %s: %w", ask.Seq, ask.Line, ask.Room, err)
		}
		s.addStat(ctx, ask.Room, parley.SystemSeat, "tokens_posted", int64(msg.Tokens))
		s.addStat(ctx, ask.Room, parley.SystemSeat, "messages", 1)
		s.log.InfoContext(ctx, "room: ask lapsed", "room", ask.Room, "seq", ask.Seq, "line", ask.Line, "default", ask.Default != "")
		s.obs.Lapsed(1)
		n++
	}
	return n, nil
}

func lapseTopic(a *parley.Ask) string {
	if a.Topic == "" {
		return "ask"
	}
	return a.Topic
}

// lapseBody is the server's message for a lapsed ask, in the convention:
//
//	v1 note limiter to builder,yu re 3 n=2
//	lapsed ask line 2 to yu, due 20260918T0900Z
//	default applied: silence past the ask time→A with the fail-open
func lapseBody(a *parley.Ask) string {
	to := a.From
	if a.To != a.From {
		to += "," + a.To
	}
	if a.To == "all" {
		to = "all"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "v1 note %s to %s re %d n=2\n", lapseTopic(a), to, a.Seq)
	due := "no time"
	if a.Due != nil {
		due = formatTime(*a.Due)
	}
	fmt.Fprintf(&b, "lapsed ask line %d to %s, due %s\n", a.Line, a.To, due)
	if a.Default != "" {
		fmt.Fprintf(&b, "default applied: %s\n", oneLine(a.Default))
	} else {
		fmt.Fprintf(&b, "outcome no default was stated; %s decides what happens next\n", a.From)
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
