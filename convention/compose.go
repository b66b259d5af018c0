package convention

import (
	"slices"
	"strconv"
	"strings"
)

// Draft is a message given by its parts instead of its text: what a writer fills in when it
// would rather not write the header or count the fact lines. Compose turns it into the
// convention text, with the header's n= counted from Lines.
type Draft struct {
	Intent string   `json:"intent"`
	Topic  string   `json:"topic"`
	To     []string `json:"to"`
	Re     int64    `json:"re,omitempty"` // the seq this message answers; 0 for none
	Lines  []string `json:"lines"`        // the fact lines, one entry each, in order
}

// Compose writes d as a convention message, `v1 <intent> <topic> to <seat>[,<seat>…] [re
// <seq>] n=<len(Lines)>` and then one fact per line, each ending in LF. The text is exactly
// what Parse reads back as d: a part that would not read back (an unknown intent, a topic of
// two words, a fact holding a line break, a fact that is itself a header, a blank fact) is an
// error, with the line of the composed message it belongs on (the header is line 1, Lines[i]
// line i+2), and no text is returned then. Addressees are checked only for their form; which
// seats sit in the room is the room's business, as is everything Validate checks in a message
// however it was written.
func Compose(d Draft) (string, []Diagnostic) {
	var diags []Diagnostic
	bad := func(line int, code, msg, fix string) {
		diags = append(diags, Diagnostic{Line: line, Col: 1, Severity: SeverityError, Code: code, Message: msg, Fix: fix})
	}
	switch {
	case d.Intent == "":
		bad(1, "draft-intent", "intent is empty: say what the message does, one of "+strings.Join(Intents, ", "), "")
	case !slices.Contains(Intents, d.Intent):
		bad(1, "draft-intent", "intent "+quote(d.Intent)+" is not one of "+strings.Join(Intents, ", "), nearestIntent(d.Intent))
	}
	switch t := tokens(d.Topic); {
	case d.Topic == "":
		bad(1, "draft-topic", "topic is empty: name the task with one word, e.g. limiter", "")
	case len(t) != 1 || t[0].s != d.Topic:
		bad(1, "draft-topic", "topic "+quote(d.Topic)+" is not one word: name the task with one word, e.g. limiter", strings.Join(strings.Fields(d.Topic), "-"))
	case d.Topic == "to" || d.Topic == "re" || isNToken(d.Topic):
		bad(1, "draft-topic", "topic "+quote(d.Topic)+" would read as part of the header: choose another word", "")
	}
	if len(d.To) == 0 {
		bad(1, "draft-to", "to is empty: name at least one seat who must act, or all", "")
	}
	for _, s := range d.To {
		if s != "all" && !validSeat(s) {
			bad(1, "draft-to", "to names "+quote(s)+", which is not a seat name (letters, digits, '.', '_' and '-', starting with a letter or digit)", "")
		}
	}
	if d.Re < 0 {
		bad(1, "draft-re", "re is "+strconv.FormatInt(d.Re, 10)+": give the seq of the message this one answers, or leave it out", "")
	}
	if len(d.Lines) == 0 {
		bad(2, "draft-lines", "lines is empty: give the message's facts, one entry per line", "")
	}
	for i, l := range d.Lines {
		at := i + 2
		which := "lines[" + strconv.Itoa(i) + "]"
		switch {
		case strings.ContainsAny(l, "\n\r"):
			bad(at, "draft-line", which+" holds a line break: give each fact as its own entry of lines", "")
		case strings.TrimSpace(l) == "":
			bad(at, "draft-line", which+" is blank: every entry of lines is one fact", "")
		case Looks(l):
			bad(at, "draft-line", which+" is itself a header ("+quote(firstWords(l, 4))+"): the server writes the header from intent, topic, to and re; lines holds only the facts", "")
		}
	}
	if len(diags) > 0 {
		return "", diags
	}
	h := Header{Version: Version, Intent: d.Intent, Topic: d.Topic, To: d.To, Re: d.Re, N: len(d.Lines)}
	var b strings.Builder
	b.WriteString(RenderHeader(h))
	b.WriteByte('\n')
	for _, l := range d.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	text := b.String()
	// What the reader will parse must be what was given; anything else would be a message
	// other than the one the writer meant.
	m, pd := Parse(text)
	got := m.Header
	if len(pd) > 0 || got.Intent != d.Intent || got.Topic != d.Topic || !slices.Equal(got.To, d.To) ||
		got.Re != d.Re || got.N != len(d.Lines) || len(m.Lines) != len(d.Lines) {
		msg := "the parts do not read back as given once written as a message"
		if len(pd) > 0 {
			msg += ": " + pd[0].Message
		}
		bad(1, "draft", msg, "")
		return "", diags
	}
	return text, nil
}

// nearestIntent suggests the intent a misspelt one probably meant ("reports", "Report").
func nearestIntent(s string) string {
	low := strings.ToLower(s)
	for _, in := range Intents {
		if low == in || strings.TrimSuffix(low, "s") == in || strings.TrimSuffix(low, "ed") == in || strings.TrimSuffix(low, "d") == in {
			return in
		}
	}
	return ""
}

// firstWords is s cut to its first n words, for quoting a line in a message.
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = append(f[:n], "…")
	}
	return strings.Join(f, " ")
}
