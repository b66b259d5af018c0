package room

import (
	"context"
	"strings"
	"unicode"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/convention"
)

// The acknowledgement cap. A message is content-free when every fact line is an
// acknowledgement ("ok", "thanks", "ack", "got it", "noted", "+1", an emoji …, optionally
// after one plain label word such as `outcome`, and with seat names and punctuation ignored),
// or when it has no fact lines at all. Plain text in a lenient room is judged line by line the
// same way. A message with `re` that answers an open ask is never content-free.
//
// Only acknowledgements count: a line is never content-free for being short. `red`, `green`,
// `rolled-back` or a bare seat name are one-word facts, and a line must hold at least one
// acknowledgement phrase for its seat names to be ignored.
//
// The rule: when the room's last ackRun messages from seats (the server's own excluded) were
// all content-free, another content-free message is refused with EINVALID. Two seats can
// acknowledge each other once; the third "thanks" in a row is the start of a loop that every
// seat pays to read. Waiting would not make it acceptable, so it is not a rate limit.
const ackRun = 2

var ackPhrases = map[string]bool{
	"ok": true, "okay": true, "k": true, "kk": true, "ack": true, "acked": true, "acknowledged": true,
	"noted": true, "thanks": true, "thank you": true, "thx": true, "ty": true, "got it": true,
	"roger": true, "roger that": true, "understood": true, "will do": true, "sounds good": true,
	"great": true, "cool": true, "nice": true, "+1": true, "👍": true, "🙏": true, "received": true,
	"copy": true, "copy that": true, "you too": true, "likewise": true, "no problem": true, "np": true,
	"cheers": true, "perfect": true, "same": true, "confirmed": true, "all good": true,
	"✅": true, "👌": true, "🙌": true, "👏": true, "✔": true, "✔️": true, "❤️": true, "🎉": true,
}

// isAckText reports whether s is acknowledgement phrases, with seat names and "all" around
// them: at least one phrase, and nothing else. An empty s is not an acknowledgement.
func isAckText(s string, seats []string) bool {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(",.;:!?()-—~", r) {
			return ' '
		}
		return r
	}, s)
	var few [16]string // most lines: their words on the stack
	words := few[:0]
	for w := range strings.FieldsSeq(s) {
		words = append(words, w)
	}
	phrases := 0
	for i := 0; i < len(words); {
		switch {
		case i+1 < len(words) && ackPhrases[words[i]+" "+words[i+1]]:
			i += 2
			phrases++
		case ackPhrases[words[i]] || emojiWord(words[i]):
			i++
			phrases++
		case contains(seats, words[i]) || words[i] == "all":
			i++
		default:
			return false
		}
	}
	return phrases > 0
}

// emojiWord reports whether w is made of pictographs only (👍, 🎉🎉, 🙏🏽): a reaction, which
// says nothing a reader needs.
func emojiWord(w string) bool {
	pict := false
	for _, r := range w {
		switch {
		case unicode.Is(unicode.So, r):
			pict = true
		case unicode.Is(unicode.Sk, r), r == 0xFE0F, r == 0x200D: // skin tones, variation, joiner
		default:
			return false
		}
	}
	return pict
}

// ackLine reports whether one convention fact line is an acknowledgement: the whole line, or
// the text after its first word (a label such as `outcome ok`). A line of one word is judged
// as that word alone.
func ackLine(l convention.Line, seats []string) bool {
	if isAckText(l.Raw, seats) {
		return true
	}
	return strings.TrimSpace(l.Text) != "" && isAckText(l.Text, seats)
}

// contentFree applies the rule above to a parsed body.
func contentFree(format, body string, m *convention.Message, seats []string) bool {
	if m != nil {
		// Any reserved line makes the message content, whatever the others say: that test
		// is a field's, the acknowledgement test reads words, so it goes first.
		for _, l := range m.Lines {
			if l.Reserved {
				return false
			}
		}
		for _, l := range m.Lines {
			if !ackLine(l, seats) {
				return false
			}
		}
		return true
	}
	if format != parley.FormatText {
		return false // an AACP packet always carries a task
	}
	acks := 0
	for _, l := range strings.Split(body, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if !isAckText(l, seats) {
			return false
		}
		acks++
	}
	return acks > 0
}

// checkAcks refuses the ackRun+1-th content-free message in a row.
func (s *Service) checkAcks(ctx context.Context, room string, d *draft, seats []string) error {
	if !contentFree(d.format, d.body, d.conv, seats) {
		return nil
	}
	if d.re > 0 {
		open, err := s.store.Asks(ctx, room, parley.AskOpen)
		if err != nil {
			return s.internal(ctx, "post: asks", err)
		}
		for _, a := range open {
			if a.Seq == d.re {
				return nil // "ok" can be the answer to an ask
			}
		}
	}
	last, err := s.store.LastSeq(ctx, room)
	if err != nil {
		return s.internal(ctx, "post: last seq", err)
	}
	// The server's own messages are skipped, so look a little further back than ackRun.
	recent, err := s.store.Messages(ctx, room, max(0, last-4*ackRun), 0)
	if err != nil {
		return s.internal(ctx, "post: recent", err)
	}
	run := 0
	for i := len(recent) - 1; i >= 0 && run < ackRun; i-- {
		m := recent[i]
		if m.Seat == parley.SystemSeat {
			continue
		}
		var conv *convention.Message
		if m.Format == parley.FormatConvention {
			conv, _ = convention.Parse(m.Body)
		}
		if !contentFree(m.Format, m.Body, conv, seats) {
			return nil
		}
		run++
	}
	if run < ackRun {
		return nil
	}
	return parley.Errorf(parley.EINVALID, "the last %d messages in room %s were acknowledgements; a third adds nothing", ackRun, room).
		WithHint("silence is fine: post when you have a fact, an answer or a question; acknowledge inside your next real message if you must")
}
