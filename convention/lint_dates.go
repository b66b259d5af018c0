// Date and time rules: dates not written ISO basic, and Unix timestamps.

package convention

import (
	"strconv"
	"strings"
	"time"
)

// dates warns on every date or time not written ISO basic, with the rewrite and its saving.
func (l *linter) dates(ln Line) {
	if ln.Text == "" {
		return
	}
	text := ln.Text
	for _, h := range findDates(text) {
		written := text[h.start:h.end]
		col := ln.TextCol() + h.start
		if h.rewrite == "" {
			msg := quote(written) + " is " + h.why + ": write an ISO basic UTC time such as 20260919T1200Z"
			l.warn(ln.Num, col, "date-format", msg, "")
			continue
		}
		before := ln.render()
		newText := text[:h.start] + h.rewrite + text[h.end:]
		after := Line{Word: ln.Word, Key: ln.Key, Mark: ln.Mark, Text: newText}.render()
		saved := l.countTokens(before) - l.countTokens(after)
		msg := quote(written) + " is " + h.why + ": ISO basic " + h.rewrite + " says the same"
		switch {
		case saved > 0:
			msg += " in " + plural(saved, "token") + " fewer"
		case saved < 0:
			msg += " in " + plural(-saved, "token") + " more, but one form is what every reader parses the same way"
		}
		if h.assumeUTC {
			msg += " (no zone was written: the rewrite assumes UTC)"
		}
		l.warn(ln.Num, col, "date-format", msg, ln.Raw[:ln.Col()-1]+after)
	}
}

// timeWords label a number as a point in time, so that a 10- or 13-digit number after one
// reads as a Unix timestamp.
var timeWords = map[string]bool{"deadline": true, "eta": true, "at": true, "by": true, "until": true, "since": true, "expires": true, "ts": true, "time": true, "timestamp": true, "due": true, "from": true, "before": true, "after": true, "started": true, "ended": true}

// unixHits finds the Unix timestamps in a line: 10 or 13 digits after a word that labels a
// time, between the years 2000 and 2100.
func unixHits(ln Line) []tok { return unixHitsIn(textWords(ln.Raw)) }

// unixHitsIn is unixHits on the line's words (textWords of its Raw).
func unixHitsIn(words []tok) []tok {
	var out []tok
	for i, w := range words {
		if i == 0 || !(len(w.s) == 10 || len(w.s) == 13) || !allDigits(w.s) {
			continue
		}
		if !timeWords[strings.ToLower(strings.TrimRight(words[i-1].s, ":="))] {
			continue
		}
		secs, _ := strconv.ParseInt(w.s, 10, 64)
		if len(w.s) == 13 {
			secs /= 1000
		}
		if secs >= 946684800 && secs <= 4102444800 {
			out = append(out, w)
		}
	}
	return out
}

// unixTimes warns on Unix timestamps (unixs, found among the words of ln.Raw), which no reader
// converts in its head.
func (l *linter) unixTimes(ln Line, unixs []tok) {
	for _, w := range unixs {
		secs, _ := strconv.ParseInt(w.s, 10, 64)
		if len(w.s) == 13 {
			secs /= 1000
		}
		iso := FormatTime(time.Unix(secs, 0))
		fix := ln.Raw[:w.col-1] + iso + ln.Raw[w.col-1+len(w.s):]
		l.warn(ln.Num, w.col, "date-format", quote(w.s)+" reads as a Unix timestamp, which a reader cannot check at a glance: ISO basic "+iso, fix)
	}
}
