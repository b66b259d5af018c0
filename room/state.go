package room

import (
	"context"
	"fmt"
	"iter"
	"sort"
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
	"github.com/parleyhq/parley/evidence"
)

// State builds the state record of one topic from the room's messages on it.
//
// What goes where:
//
//   - open asks: the topic's asks still open, with addressee, time, default and decider;
//   - decisions: the lines of a `decide` message, and of an answer that closed an ask when the
//     answering seat is the ask's decider (or, with no decider, its addressee); and every
//     default the server applied when an ask lapsed. Lines that say what someone intends,
//     proposes or did (plan, rec, todo, done, ev, claim, ask, block, opt, risk, mit, unknown:
//     notDecision) are never decisions: a recommendation or a plan read as a decision taken is
//     the costliest misreading the study found;
//   - done: every done line with its evidence verdict, as frozen in its message's notes;
//   - claims: every claim line, and every done whose evidence is not verified;
//   - todos and blocks: those of each seat's latest report on the topic: its latest message
//     that is a `report` or carries todo or block lines (a later report without them means
//     the seat has none left; a proposal or an answer says nothing about them);
//   - costs: every `cost` line, and the tokens each seat posted on the topic.
func (s *Service) State(ctx context.Context, c *parley.Caller, room, topic string) (*parley.StateRecord, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	if topic == "" {
		return nil, parley.Errorf(parley.EINVALID, "no topic").WithHint("name the topic, the third word of a message header")
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	asks, err := s.store.TopicAsks(ctx, room, topic)
	if err != nil {
		return nil, s.internal(ctx, "state", err)
	}
	// Only the topic's messages are read, through the store's topic index, so a record costs
	// what its topic holds, not what the room holds; and they are read a chunk at a time,
	// never whole: memory stays bounded by the chunk and by the record, which buildState
	// keeps within its cap as it goes.
	var readErr error
	msgs := func(yield func(*parley.Message) bool) {
		for after := int64(0); ; {
			chunk, err := s.store.TopicMessages(ctx, room, topic, after, stateChunk)
			if err != nil {
				readErr = err
				return
			}
			for _, m := range chunk {
				if !yield(m) {
					return
				}
				after = m.Seq
			}
			if len(chunk) < stateChunk {
				return
			}
		}
	}
	rec := buildState(room, topic, msgs, asks)
	if readErr != nil {
		return nil, s.internal(ctx, "state", readErr)
	}
	if rec.LastSeq == 0 {
		return nil, parley.Errorf(parley.ENOTFOUND, "room %s has no messages on topic %s", room, topic)
	}
	boundState(rec)
	return rec, nil
}

// stateChunk is how many messages State reads from the store at a time.
const stateChunk = 64

// buildState builds the record from msgs and asks, which may hold other topics' too (they are
// skipped), in seq order.
func buildState(room, topic string, msgs iter.Seq[*parley.Message], asks []*parley.Ask) *parley.StateRecord {
	rec := &parley.StateRecord{
		Room: room, Topic: topic, OpenAsks: []*parley.Ask{}, Decisions: []parley.StateItem{},
		Done: []parley.StateItem{}, Claims: []parley.StateItem{}, Todos: []parley.StateItem{},
		Blocks: []parley.StateItem{}, Costs: []parley.StateItem{}, Tokens: map[string]int{},
	}
	// closedBy maps an answering message to the asks it closed.
	closedBy := map[int64][]*parley.Ask{}
	for _, a := range asks {
		if a.Topic != topic {
			continue
		}
		switch a.State {
		case parley.AskOpen:
			rec.OpenAsks = append(rec.OpenAsks, a)
		case parley.AskAnswered:
			closedBy[a.ClosedBy] = append(closedBy[a.ClosedBy], a)
		}
	}

	type parsed struct {
		msg  *parley.Message
		conv *convention.Message
	}
	latest := map[string]parsed{}
	grown := 0 // bytes of items added since the record was last bounded, roughly
	for m := range msgs {
		if m.Topic != topic {
			continue
		}
		rec.LastSeq = m.Seq
		rec.Tokens[m.Seat] += m.Tokens
		if m.Format != parley.FormatConvention {
			continue
		}
		conv, _ := convention.Parse(m.Body)
		// Items are dropped oldest first, so what is dropped now would be dropped at the end.
		if grown += len(m.Body) + 100*len(conv.Lines); grown > 4*StateJSONCap {
			boundState(rec)
			grown = 0
		}
		if m.Seat != parley.SystemSeat && (m.Intent == "report" || hasWord(conv, "todo", "block")) {
			latest[m.Seat] = parsed{m, conv}
		}
		item := func(text string) parley.StateItem { return parley.StateItem{Seq: m.Seq, Seat: m.Seat, Text: text} }

		decisive := m.Intent == "decide"
		for _, a := range closedBy[m.Seq] {
			if decidedBy(a, m.Seat) {
				decisive = true
			}
		}
		for _, l := range conv.Lines {
			switch {
			case m.Seat == parley.SystemSeat:
				if strings.HasPrefix(l.Raw, "default applied:") {
					rec.Decisions = append(rec.Decisions, item(fmt.Sprintf("re #%d %s", m.Re, l.Raw)))
				}
				continue
			case decisive && !notDecision[l.Word]:
				rec.Decisions = append(rec.Decisions, item(l.Raw))
			}
			switch l.Word {
			case "claim":
				rec.Claims = append(rec.Claims, item(l.Text))
			case "cost":
				rec.Costs = append(rec.Costs, item(l.Text))
			}
		}
		for _, p := range pairEvidence(conv, nil) {
			it := item(p.done.Text)
			it.Verdict = doneVerdict(m.Notes, p.done)
			rec.Done = append(rec.Done, it)
			if !strings.HasPrefix(it.Verdict, evidence.Verified) {
				rec.Claims = append(rec.Claims, it)
			}
		}
	}

	seats := make([]string, 0, len(latest))
	for seat := range latest {
		seats = append(seats, seat)
	}
	sort.Strings(seats)
	for _, seat := range seats {
		p := latest[seat]
		for _, l := range p.conv.Lines {
			it := parley.StateItem{Seq: p.msg.Seq, Seat: seat, Text: l.Text}
			switch l.Word {
			case "todo":
				rec.Todos = append(rec.Todos, it)
			case "block":
				rec.Blocks = append(rec.Blocks, it)
			}
		}
	}
	return rec
}

// notDecision are the line words that never state a decision, even in a `decide` message or
// in the decider's answer: a plan, a recommendation, work done or to do, a claim and its
// evidence, a new ask, a block, options and risks say what someone intends, proposes or did,
// not what was settled.
var notDecision = map[string]bool{
	"plan": true, "rec": true, "todo": true, "done": true, "ev": true, "claim": true,
	"ask": true, "block": true, "opt": true, "risk": true, "mit": true, "unknown": true,
}

// decidedBy reports whether seat's answer to a settles it: seat is the ask's decider (the
// first word of its decider line), or, when the ask names none, one of its addressees.
func decidedBy(a *parley.Ask, seat string) bool {
	if f := strings.Fields(a.Decider); len(f) > 0 {
		return f[0] == seat
	}
	return a.To == seat || a.To == "all"
}

// StateCap is the most bytes RenderState writes.
const StateCap = 4096

// RenderState writes a state record in the convention, at most StateCap bytes: when it would
// be longer, the oldest items are dropped first and a line says how many (with those the
// record itself left out, its Dropped).
//
//	v1 state limiter to all n=6
//	ask #3 builder to yu: how to store rate-limit counters, 20260918T0900Z
//	default #3 silence past the ask time→A with the fail-open
//	done#1 #2 builder: limiter lib/rate-limit.ts sliding window
//	ev#1 verified: commit 3f9a2c1 on feat/rate-limit
//	claim #2 builder: unit test passing, 12 cases
//	tokens builder=274 lead=125
func RenderState(r *parley.StateRecord) string {
	type group struct {
		seq   int64
		lines []string
	}
	var groups []group
	add := func(seq int64, lines ...string) { groups = append(groups, group{seq, lines}) }

	for _, a := range r.OpenAsks {
		lines := []string{fmt.Sprintf("ask #%d %s to %s: %s", a.Seq, a.From, a.To, clip(a.Text))}
		if a.Due != nil && !strings.Contains(a.Text, formatTime(*a.Due)) {
			lines[0] += ", due " + formatTime(*a.Due)
		}
		if a.Decider != "" {
			lines = append(lines, fmt.Sprintf("decider #%d %s", a.Seq, clip(a.Decider)))
		}
		if a.Default != "" {
			lines = append(lines, fmt.Sprintf("default #%d %s", a.Seq, clip(a.Default)))
		}
		add(a.Seq, lines...)
	}
	for _, d := range r.Decisions {
		add(d.Seq, fmt.Sprintf("decided #%d %s: %s", d.Seq, d.Seat, clip(d.Text)))
	}
	k := 0
	for _, d := range r.Done {
		if !strings.HasPrefix(d.Verdict, evidence.Verified) {
			continue // shown among the claims, with the reason
		}
		k++
		add(d.Seq, fmt.Sprintf("done#%d #%d %s: %s", k, d.Seq, d.Seat, clip(d.Text)),
			fmt.Sprintf("ev#%d %s", k, d.Verdict))
	}
	for _, c := range r.Claims {
		line := fmt.Sprintf("claim #%d %s: %s", c.Seq, c.Seat, clip(c.Text))
		if c.Verdict != "" {
			line += " (done, " + c.Verdict + ")"
		}
		add(c.Seq, line)
	}
	for _, t := range r.Todos {
		add(t.Seq, fmt.Sprintf("todo %s: %s", t.Seat, clip(t.Text)))
	}
	for _, b := range r.Blocks {
		add(b.Seq, fmt.Sprintf("block %s: %s", b.Seat, clip(b.Text)))
	}
	for _, c := range r.Costs {
		add(c.Seq, fmt.Sprintf("cost %s: %s", c.Seat, clip(c.Text)))
	}
	var tokens []string
	for seat, n := range r.Tokens {
		tokens = append(tokens, fmt.Sprintf("%s=%d", seat, n))
	}
	sort.Strings(tokens)

	// The tokens line is always kept: it is short and says who has been talking.
	tail := ""
	if len(tokens) > 0 {
		tail = "tokens " + strings.Join(tokens, " ")
	}
	size := func(keep []bool, dropped int) (int, int) {
		n, bytes := 0, 0
		for i, g := range groups {
			if keep[i] {
				n += len(g.lines)
				for _, l := range g.lines {
					bytes += len(l) + 1
				}
			}
		}
		if tail != "" {
			n++
			bytes += len(tail) + 1
		}
		if dropped > 0 {
			n++
			bytes += len(droppedLine(dropped)) + 1
		}
		bytes += len(stateHeader(r, n)) + 1
		return n, bytes
	}
	keep := make([]bool, len(groups))
	for i := range keep {
		keep[i] = true
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return groups[order[a]].seq < groups[order[b]].seq })
	dropped := r.Dropped // left out of the record already
	n, total := size(keep, dropped)
	for _, i := range order {
		if total <= StateCap {
			break
		}
		keep[i] = false
		dropped += len(groups[i].lines)
		n, total = size(keep, dropped)
	}

	var b strings.Builder
	b.WriteString(stateHeader(r, n))
	b.WriteByte('\n')
	for i, g := range groups {
		if keep[i] {
			for _, l := range g.lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	if dropped > 0 {
		b.WriteString(droppedLine(dropped))
		b.WriteByte('\n')
	}
	if tail != "" {
		b.WriteString(tail)
		b.WriteByte('\n')
	}
	return b.String()
}

func stateHeader(r *parley.StateRecord, n int) string {
	return fmt.Sprintf("v1 state %s to all n=%d", r.Topic, n)
}

func droppedLine(n int) string {
	return fmt.Sprintf("dropped %d older %s; the history has them", n, pluralWord(n, "line"))
}

// stateLineCap bounds one line of a state record, so that one long message cannot crowd out
// everything else.
const stateLineCap = 300

// clip is oneLine, cut at stateLineCap bytes on a character boundary.
func clip(s string) string {
	s = oneLine(s)
	if len(s) <= stateLineCap {
		return s
	}
	cut := stateLineCap
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// hasWord reports whether m has a line starting with one of words.
func hasWord(m *convention.Message, words ...string) bool {
	for _, l := range m.Lines {
		for _, w := range words {
			if l.Word == w {
				return true
			}
		}
	}
	return false
}
