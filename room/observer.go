package room

import (
	"context"
	"time"

	"github.com/parleyhq/parley"
)

// Observer hears what the service does that an operator counts: lapses, evidence verdicts,
// refusals and store appends. Package internal/metrics implements it on a Prometheus
// registry, so the room service needs no metrics library. Its methods are called on the
// request's goroutine and must not block.
type Observer interface {
	Lapsed(n int)                   // the scheduler closed n due asks
	EvidenceChecked(verdict string) // one ev line judged: evidence.Verified, Unverified or Failed
	Refused(code string)            // a post refused with this parley error code (never EINTERNAL)
	AppendTook(d time.Duration)     // one store append, a post's or a lapse's, took d
}

// noObserver is the Observer of a service configured without one.
type noObserver struct{}

func (noObserver) Lapsed(int)               {}
func (noObserver) EvidenceChecked(string)   {}
func (noObserver) Refused(string)           {}
func (noObserver) AppendTook(time.Duration) {}

// appendTimed is store.Append, timed for the observer.
func (s *Service) appendTimed(ctx context.Context, a *parley.Append) (parley.Appended, error) {
	start := time.Now()
	m, err := s.store.Append(ctx, a)
	s.obs.AppendTook(time.Since(start))
	return m, err
}
