package room

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
)

// draft is a body that passed the checks that do not depend on history: limits, format,
// validation and addressing.
type draft struct {
	body     string
	format   string
	topic    string
	intent   string
	re       int64
	to       []string
	conv     *convention.Message // nil unless format is convention
	warnings []parley.Diagnostic
	tokens   int
	hash     []byte
}

// Post runs the post pipeline for the caller's seat.
func (s *Service) Post(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
	return s.post(ctx, c, room, body, nil, key)
}

// post is the pipeline, for a body, or for parts (not nil) that it composes once the rate caps
// have counted the post, so that parts which make no message count as a refused post.
func (s *Service) post(ctx context.Context, c *parley.Caller, room string, body []byte, parts *parley.Draft, key string) (res *parley.PostResult, err error) {
	defer func() {
		if code := parley.ErrorCode(err); err != nil && code != parley.EINTERNAL {
			s.obs.Refused(code)
		}
	}()
	// The seat as this request authenticated it: the append checks it again in its own
	// transaction (Append.Poster), which is the check that counts, so a post makes no read
	// of its seat here.
	seat, err := seatIn(c, room)
	if err != nil {
		return nil, err
	}
	// On its way to the append: a store that shares commits may hold one for it (postsComing).
	// Withdrawn just before the append, or when the post is refused; the defer makes sure.
	coming := s.coming
	if coming != nil {
		coming.PostsComing(room, 1)
		defer func() {
			if coming != nil {
				coming.PostsComing(room, -1)
			}
		}()
	}
	r, seats, roster, err := s.postRoom(ctx, room)
	if err != nil {
		return nil, err
	}
	// The rate caps count every post, refused ones too, as if they came first (limits.go).
	ch, rep, err := s.admit(ctx, room, seat.Name, r.Policy, key)
	if rep != nil || err != nil {
		return rep, err
	}
	defer func() { res, err = ch.settle(ctx, res, err) }()
	if parts != nil {
		if body, err = compose(parts); err != nil {
			return nil, err
		}
	}
	text := string(body) // the one copy: every check below reads it
	if err := checkLimits(text, r.Policy); err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, err
	}
	// A retry must get its original answer even when dedup or a rate cap would now refuse it.
	if key != "" {
		orig, err := s.store.ByIdempotencyKey(ctx, room, seat.Name, key)
		switch {
		case err == nil:
			return replay(orig), nil
		case parley.ErrorCode(err) != parley.ENOTFOUND:
			return nil, s.internal(ctx, "post: idempotency key", err)
		}
	}
	d, err := s.parse(text, r.Policy, seats, roster)
	if err != nil {
		return nil, err
	}
	reMsg, err := s.checkRe(ctx, room, d.re)
	if err != nil {
		return nil, err
	}

	// Dedup comes next in the pipeline's order, but the store's append checks it again in
	// its transaction, which is the check that counts (two posts of one body may race past
	// any earlier one). So a post is not read for a repeat here, ahead of the append, but
	// only when a later check is about to refuse it: a repeat is then refused as a repeat,
	// exactly as if it had been checked first (the same answer and dedup stats, no tokens
	// kept), and the common post, which repeats nothing, saves a store read.
	now := s.now().UTC()
	since := now.Add(-time.Duration(r.Policy.DedupWindow))
	repeatFirst := func(refusal error) error {
		orig, err := s.store.Duplicate(ctx, room, seat.Name, d.hash, since, r.Policy.DedupMessages)
		if err != nil {
			return s.internal(ctx, "post: dedup", err)
		}
		if orig != 0 {
			return ch.refuseDuplicate(ctx, orig, d.tokens)
		}
		return refusal
	}
	if err := s.checkAcks(ctx, room, d, seats); err != nil {
		return nil, repeatFirst(err)
	}
	if err := s.checkSecrets(ctx, d.body, d.format); err != nil {
		return nil, repeatFirst(err)
	}
	if rep, err := ch.takeTokens(ctx, d.tokens); rep != nil || err != nil {
		if ch.overCap {
			return rep, err
		}
		return nil, repeatFirst(err)
	}
	// Commit evidence is judged by running git, work a repeat must not make the server do
	// again: a post that cites a commit is read for a repeat before it is judged.
	if s.checksCommits(d) {
		if err := repeatFirst(nil); err != nil {
			return nil, err
		}
	}
	var few [4]string
	notes, verdicts := s.evidenceNotes(ctx, room, d, r.Policy.MaxEvidenceChecks, few[:0])

	msg := &parley.Message{
		Room: room, Seat: seat.Name, Time: now, Format: d.format, Topic: d.topic, Intent: d.intent,
		Re: d.re, Body: d.body, Tokens: d.tokens, Hash: d.hash, Notes: notes, IdempotencyKey: key,
	}
	a := &parley.Append{Message: msg, Asks: asksOf(d, seat.Name), DedupSince: since, DedupLast: r.Policy.DedupMessages, Poster: seat}
	for _, ask := range a.Asks {
		if ask.Due != nil && !ask.Due.After(now) {
			// Not refused: the sender may mean it. But the default applies at once.
			d.warnings = append(d.warnings, parley.Diagnostic{Line: ask.Line, Col: 1, Severity: "warning", Code: "ask-past",
				Message: fmt.Sprintf("the ask's time %s has passed (server time %s): it lapses at once", formatTime(*ask.Due), now.Format(TimeFormat)),
				Fix:     "give a time in the future, in ISO basic UTC such as " + formatTime(now.Add(2*time.Hour).Truncate(time.Hour))})
		}
	}
	if reMsg != nil && addressedTo(reMsg, seat.Name) {
		// Only a seat the asking message addressed can answer its asks; anyone may refer to
		// it with re without closing them.
		a.Answers = []int64{d.re}
	}
	if coming != nil {
		coming.PostsComing(room, -1) // the append announces itself
		coming = nil
	}
	m, err := s.appendTimed(ctx, a)
	if orig := seqField(err); orig > 0 && parley.ErrorCode(err) == parley.ECONFLICT {
		// A repeat, refused by the append's own check; its tokens go back (settle), and its
		// evidence was not judged for any message, so the verdicts are not counted.
		return nil, s.refuseDuplicate(ctx, room, seat.Name, orig, d.tokens)
	}
	for _, v := range verdicts {
		s.obs.EvidenceChecked(v)
	}
	switch {
	case err != nil:
		return nil, s.internal(ctx, "post: append", err)
	case m.Replay:
		// A retry with the same key won the race past the early idempotency check.
		return replay(m.Message), nil
	}
	s.addStat(ctx, room, seat.Name, "tokens_posted", int64(d.tokens))
	s.addStat(ctx, room, seat.Name, "messages", 1)
	for _, ask := range a.Asks {
		if ask.Due != nil {
			s.nudge()
			break
		}
	}
	return &parley.PostResult{Seq: m.Seq, Tokens: m.Tokens, Notes: nonNil(m.Notes), Warnings: capWarnings(d.warnings)}, nil
}

// Lint checks a draft as Post would (limits, format, validation, addressing, dedup, the
// acknowledgement cap and the secret scan) without storing or counting anything. Refusals
// come back as error diagnostics; only access problems are errors.
func (s *Service) Lint(ctx context.Context, c *parley.Caller, room string, body []byte) ([]parley.Diagnostic, error) {
	seat, err := s.poster(ctx, c, room)
	if err != nil {
		return nil, err
	}
	r, seats, roster, err := s.postRoom(ctx, room)
	if err != nil {
		return nil, err
	}
	refused := func(err error) ([]parley.Diagnostic, error) {
		pe, ok := err.(*parley.Error)
		if !ok {
			return nil, err
		}
		if ds, ok := pe.Fields["diagnostics"].([]parley.Diagnostic); ok {
			return withMore(ds, moreOf(pe), "error"), nil
		}
		return []parley.Diagnostic{{Line: 1, Col: 1, Severity: "error", Code: pe.Code, Message: pe.Message, Fix: pe.Hint}}, nil
	}
	text := string(body)
	if err := checkLimits(text, r.Policy); err != nil {
		return refused(err)
	}
	d, err := s.parse(text, r.Policy, seats, roster)
	if err != nil {
		return refused(err)
	}
	if _, err := s.checkRe(ctx, room, d.re); err != nil {
		return refused(err)
	}
	since := s.now().UTC().Add(-time.Duration(r.Policy.DedupWindow))
	orig, err := s.store.Duplicate(ctx, room, seat.Name, d.hash, since, r.Policy.DedupMessages)
	if err != nil {
		return nil, s.internal(ctx, "lint: dedup", err)
	}
	if orig != 0 {
		return refused(duplicateError(orig))
	}
	if err := s.checkAcks(ctx, room, d, seats); err != nil {
		return refused(err)
	}
	if err := s.checkSecrets(ctx, d.body, d.format); err != nil {
		return refused(err)
	}
	return capWarnings(d.warnings), nil
}

// poster returns the caller's seat, fresh from the store, for what checks a seat without an
// append (Lint, a run's report): a seat revoked since its token was authenticated gets nothing
// through. A post leaves the check to its append (Append.Poster).
func (s *Service) poster(ctx context.Context, c *parley.Caller, room string) (*parley.Seat, error) {
	seat, err := seatIn(c, room)
	if err != nil {
		return nil, err
	}
	cur, err := s.store.Seat(ctx, room, seat.Name)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return nil, parley.PosterError(room, seat, nil)
	}
	if err != nil {
		return nil, s.internal(ctx, "post: seat", err)
	}
	if err := parley.PosterError(room, seat, cur); err != nil {
		return nil, err
	}
	return cur, nil
}

// activeSeats returns the names of the room's active seats.
func (s *Service) activeSeats(ctx context.Context, room string) ([]string, error) {
	all, err := s.store.Seats(ctx, room)
	if err != nil {
		return nil, s.internal(ctx, "seats", err)
	}
	names := make([]string, 0, len(all))
	for _, st := range all {
		if st.Active() {
			names = append(names, st.Name)
		}
	}
	return names, nil
}

func checkKey(key string) error {
	if len(key) > 128 {
		return parley.Errorf(parley.EINVALID, "the idempotency key is %d bytes; at most 128", len(key)).
			WithHint("use a short unique id per post, e.g. a UUID")
	}
	for _, r := range key {
		if r <= 0x20 || r == 0x7f {
			return parley.Errorf(parley.EINVALID, "the idempotency key contains a space or control character").
				WithHint("use a short unique id per post, e.g. a UUID")
		}
	}
	return nil
}

// checkRe makes sure `re <seq>` names a message of the room, and returns it (nil for no re).
func (s *Service) checkRe(ctx context.Context, room string, re int64) (*parley.Message, error) {
	if re <= 0 {
		return nil, nil
	}
	m, err := s.store.Message(ctx, room, re)
	if parley.ErrorCode(err) == parley.ENOTFOUND {
		return nil, parley.Errorf(parley.EINVALID, "re %d: room %s has no message #%d", re, room, re).
			WithHint("answer an existing message; your inbox lists the asks you owe with their seq")
	}
	if err != nil {
		return nil, s.internal(ctx, "post: re", err)
	}
	return m, nil
}

// addressedTo reports whether m's header names seat or all.
func addressedTo(m *parley.Message, seat string) bool {
	var to []string
	switch m.Format {
	case parley.FormatConvention:
		conv, _ := convention.Parse(m.Body)
		to = conv.Header.To
	case parley.FormatAACP:
		to = addresseesAACP(m.Body)
	}
	return contains(to, seat) || contains(to, "all")
}

// duplicateError is the refusal of a repeat.
func duplicateError(orig int64) *parley.Error {
	return parley.Errorf(parley.ECONFLICT, "this repeats your message #%d", orig).
		WithHint("nothing was stored; say what is new, or point to it with re %d", orig).
		With("seq", orig)
}

func (s *Service) refuseDuplicate(ctx context.Context, room, seat string, orig int64, tokens int) error {
	s.addStat(ctx, room, seat, "dedup_tokens", int64(tokens))
	s.addStat(ctx, room, seat, "dedup_messages", 1)
	return duplicateError(orig)
}

// seqField reads Fields["seq"] of a store's duplicate error.
func seqField(err error) int64 {
	pe, ok := err.(*parley.Error)
	if !ok {
		return 0
	}
	switch v := pe.Fields["seq"].(type) {
	case int64:
		return v
	case int:
		return int64(v)
	}
	return 0
}

func replay(m *parley.Message) *parley.PostResult {
	return &parley.PostResult{Seq: m.Seq, Tokens: m.Tokens, Notes: nonNil(m.Notes), Warnings: []parley.Diagnostic{}, Replay: true}
}

// normalize is what dedup compares: line endings unified, trailing blanks of every line and
// trailing newlines removed. Anything else (case, inner spaces) is a different message.
func normalize(body string) string { return string(normalizeAppend(nil, body)) }

// normalizeAppend appends body normalized to dst, in one pass: line ends (\r\n, \r, \n)
// made \n, the spaces and tabs at the end of every line dropped, and the newlines at the end
// of the body. Empty lines inside are kept; those at the end are held back in pending until
// a line with text shows they were inside.
func normalizeAppend(dst []byte, body string) []byte {
	pending := 0 // newlines not yet written
	// Nearly every body ends its lines at LF alone: one search for a CR, then LF by LF.
	noCR := strings.IndexByte(body, '\r') < 0
	for len(body) > 0 {
		var end int
		if noCR {
			end = strings.IndexByte(body, '\n')
		} else {
			end = strings.IndexAny(body, "\r\n")
		}
		line, rest := body, ""
		if end >= 0 {
			line, rest = body[:end], body[end+1:]
			if body[end] == '\r' && len(rest) > 0 && rest[0] == '\n' {
				rest = rest[1:]
			}
		}
		if line = strings.TrimRight(line, " \t"); line != "" {
			for ; pending > 0; pending-- {
				dst = append(dst, '\n')
			}
			dst = append(dst, line...)
		}
		if end >= 0 {
			pending++
		}
		body = rest
	}
	return dst
}

func hashBody(body string) []byte {
	var small [1024]byte // most bodies: normalized on the stack
	h := sha256.Sum256(normalizeAppend(small[:0], body))
	return h[:]
}

// invalidAt is an EINVALID with one diagnostic at a position.
func invalidAt(line, col int, code, msg, hint string) *parley.Error {
	return parley.Errorf(parley.EINVALID, "%s", msg).WithHint("%s", hint).
		With("diagnostics", []parley.Diagnostic{{Line: line, Col: col, Severity: "error", Code: code, Message: msg, Fix: hint}})
}

// position turns a byte offset into a 1-based line and byte column.
func position(src string, off int) (line, col int) {
	off = min(off, len(src))
	line = 1 + strings.Count(src[:off], "\n")
	return line, off - strings.LastIndexByte(src[:off], '\n')
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// PostDraft composes a message from its parts (convention.Compose: the header with n=
// counted from the lines) and posts the text through the whole pipeline, as Post would the
// same text sent whole. Parts that make no message are refused after the rate caps, as any
// refused post is.
func (s *Service) PostDraft(ctx context.Context, c *parley.Caller, room string, d *parley.Draft, key string) (*parley.PostResult, error) {
	if d == nil {
		d = &parley.Draft{}
	}
	return s.post(ctx, c, room, nil, d, key)
}

// compose writes a draft as its text, or refuses it with the diagnostics of its fields.
func compose(d *parley.Draft) ([]byte, error) {
	body, diags := convention.Compose(*d)
	if len(diags) == 0 {
		return []byte(body), nil
	}
	err := refuseErrors(diags).(*parley.Error)
	err.Hint = "fix the fields named and post again; nothing was stored"
	if diags[0].Fix != "" {
		err.Hint = "try: " + diags[0].Fix
	}
	return nil, err
}
