// Ask rules: what makes silence a valid answer (an ask with a time, a default or decider
// with an ask).

package convention

// asks checks what makes silence a valid answer: every ask has a time, a default has an ask,
// a decider has something to decide.
func (l *linter) asks() {
	hasAsk, hasReq := false, false
	for _, ln := range l.m.Lines {
		hasAsk = hasAsk || ln.Word == "ask"
		hasReq = hasReq || ln.Word == "req"
	}
	h, p := l.m.Header, l.m.pos
	switch {
	case h.Intent == "propose" && !hasAsk:
		// The study's failure: a reader with every fact of a proposal wrote "must do:
		// nothing required", because nothing asked it to decide.
		l.warn(max(p.line, 1), p.intent, "no-ask", "a proposal with no ask: nothing tells the reader it must decide, or by when, so it may do nothing or take the choice as made", "add ask <what to decide>, <time>")
	case h.Intent == "request" && !hasAsk && !hasReq:
		l.warn(max(p.line, 1), p.intent, "no-ask", "a request with no req or ask: nothing tells the reader what it must do", "add req <what to do> or ask <question>, <time>")
	}
	for _, ln := range l.m.Lines {
		switch ln.Word {
		case "ask", "deadline":
			if _, ok := ln.Time(); ok || len(findDates(ln.Text)) > 0 || len(unixHits(ln)) > 0 || ln.Text == "" {
				continue
			}
			if ln.Word == "ask" {
				l.warn(ln.Num, ln.Col(), "ask-no-time", "this ask has no time: the reader cannot tell when silence becomes the answer; add an ISO basic time", ln.Raw[:ln.Col()-1]+ln.Head()+" "+ln.Text+", <time, e.g. 20260919T1200Z>")
			} else {
				l.warn(ln.Num, ln.Col(), "deadline-no-time", "this deadline has no time: add an ISO basic time", "")
			}
		case "default":
			if !hasAsk {
				l.warn(ln.Num, ln.Col(), "default-without-ask", "a default with no ask: a default is what happens when nobody answers by the ask time, and no ask says what to answer or by when", "add ask <question>, <time>")
			}
		case "decider":
			if !hasAsk && h.Intent != "decide" && h.Intent != "answer" && h.Intent != "propose" {
				l.warn(ln.Num, ln.Col(), "decider-without-ask", "a decider with no ask: the reader is told who chooses but not what or by when, and may take the choice as made", "add ask <what to decide>, <time>")
			}
		}
	}
}
