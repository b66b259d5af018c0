package room

import (
	"slices"
	"testing"

	"github.com/parleyhq/parley"
)

// TestStateDecisionsOnlyWhatWasSettled holds buildState to what a decision is: the lines of a
// `decide` message and of the decider's answer, and defaults applied, but never a plan, a
// recommendation or a todo, in an answer or a decide, and nothing from an answer by a seat
// that is not the ask's decider.
func TestStateDecisionsOnlyWhatWasSettled(t *testing.T) {
	msg := func(seq int64, seat, intent string, re int64, body string) *parley.Message {
		return &parley.Message{Room: "r", Seq: seq, Seat: seat, Format: parley.FormatConvention,
			Topic: "limiter", Intent: intent, Re: re, Body: body}
	}
	msgs := []*parley.Message{
		msg(1, "builder", "propose", 0, "v1 propose limiter to yu n=3\nask A or B?\ndecider yu\nrec A\n"),
		msg(2, "yu", "answer", 1, "v1 answer limiter to builder re 1 n=3\noutcome A, with the fail-open\nplan ship it on Friday\ntodo tell ops\n"),
		msg(3, "builder", "answer", 1, "v1 answer limiter to yu re 1 n=1\noutcome B after all\n"),
		msg(4, "lead", "decide", 0, "v1 decide limiter to all n=3\noutcome Redis it is\nrec keep a flag\nplan roll out per region\n"),
		msg(5, "lead", "answer", 0, "v1 answer limiter to all n=1\nplan nothing decided here\n"),
		msg(6, parley.SystemSeat, "note", 1, "v1 note limiter to builder re 1 n=2\nlapsed ask line 2 to yu\ndefault applied: A\n"),
	}
	asks := []*parley.Ask{{Room: "r", Seq: 1, Line: 2, From: "builder", To: "yu", Topic: "limiter",
		Text: "A or B?", Decider: "yu", State: parley.AskAnswered, ClosedBy: 2}}
	// builder's answer closes nothing it may decide: also recorded as closing the ask, it is
	// not by the decider.
	asks = append(asks, &parley.Ask{Room: "r", Seq: 1, Line: 3, From: "builder", To: "yu", Topic: "limiter",
		Text: "again?", Decider: "yu", State: parley.AskAnswered, ClosedBy: 3})
	rec := buildState("r", "limiter", slices.Values(msgs), asks)
	var got []string
	for _, d := range rec.Decisions {
		got = append(got, d.Seat+": "+d.Text)
	}
	want := []string{
		"yu: outcome A, with the fail-open",
		"lead: outcome Redis it is",
		"room: re #1 default applied: A",
	}
	if !slices.Equal(got, want) {
		t.Errorf("decisions:\n%q\nwant\n%q", got, want)
	}
}
