// Package lint checks one message before it is posted, whatever its format: it detects
// whether the text is a convention message, an AACP packet, JSON or plain text and returns
// the diagnostics of the matching checker. `parley lint` and the format lab (/lab) call
// the same Message, so that both say the same about the same text.
package lint

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/aacp"
	"github.com/parleyhq/parley/convention"
)

// The formats Message detects.
const (
	FormatConvention = "convention"
	FormatAACP       = "aacp"
	FormatJSON       = "json"
	FormatText       = "text"
)

// The study measured convention messages at 414 tokens for the three-message thread against
// 635 for the same facts in prose; a prose message's estimate uses that ratio.
const studyConventionTokens, studyProseTokens = 414, 635

// Message detects the format of text and checks it. roster, when non-nil, lists the
// room's seats: an addressee outside it is an error. c counts tokens in
// convention.TokenEncoding for the cost figures. diags is never nil.
func Message(text string, roster []string, c convention.Counter) (format string, diags []convention.Diagnostic) {
	diags = []convention.Diagnostic{}
	trimmed := strings.TrimSpace(text)
	switch {
	case trimmed == "":
		return FormatText, append(diags, convention.Diagnostic{Line: 1, Col: 1, Severity: convention.SeverityError, Code: "empty",
			Message: "the message is empty", Fix: "start with the header: v1 <intent> <topic> to <seat> n=<fact lines>"})
	case convention.Looks(text) || convention.HeaderLine(text) > 0 && !aacp.Looks(text):
		_, ds := convention.Check(text, convention.Options{Roster: roster, Counter: c})
		return FormatConvention, append(diags, ds...)
	case aacp.Looks(text):
		_, ds := aacp.Check(text, aacp.Options{RequireTo: true, Roster: roster})
		return FormatAACP, append(diags, ds...)
	case (strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")) && json.Valid([]byte(trimmed)):
		now := c.Count(text)
		msg := fmt.Sprintf("a JSON message (%d tokens): quotes, braces and repeated keys cost more than the facts; as a convention message, one fact per line, ", now)
		if est, ok := convention.EstimateJSON([]byte(trimmed)); ok {
			msg += fmt.Sprintf("the same values would cost about %d", c.Count(est))
		}
		return FormatJSON, append(diags, convention.Diagnostic{Line: 1, Col: 1, Severity: convention.SeverityWarning, Code: "format",
			Message: msg, Fix: "rewrite as v1 <intent> <topic> to <seat> n=<fact lines>, one fact per line (see parley convention)"})
	default:
		now := c.Count(text)
		est := (now*studyConventionTokens + studyProseTokens/2) / studyProseTokens
		return FormatText, append(diags, convention.Diagnostic{Line: 1, Col: 1, Severity: convention.SeverityWarning, Code: "format",
			Message: fmt.Sprintf("plain text (%d tokens): a convention message would carry the same facts in about %d (the study's convention messages cost 35%% less than its prose), and would say who must act and what is asked", now, est),
			Fix:     "rewrite as v1 <intent> <topic> to <seat> n=<fact lines>, one fact per line (see parley convention)"})
	}
}
