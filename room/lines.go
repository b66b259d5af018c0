package room

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/textline"
)

// checkLimits enforces the size cap and the character and line rules. History shows the body
// as posted, so anything that could forge its structure (a line that reads as a message
// header or a server note, a character some reader takes as a line end) or upset a terminal
// (control characters) is refused here. The line rules are package textline's, the same
// definition every edge renders with.
func checkLimits(body string, p parley.Policy) error {
	if len(body) > p.MaxMessageBytes {
		return parley.Errorf(parley.ETOOLARGE, "the message is %d bytes; this room takes at most %d", len(body), p.MaxMessageBytes).
			WithHint("split it, or send the bulk as a reference (a path, a commit) and keep the facts")
	}
	if len(strings.TrimSpace(body)) == 0 {
		return parley.Errorf(parley.EINVALID, "the message is empty").
			WithHint("write a header and fact lines: v1 <intent> <topic> to <seat> n=<fact lines>")
	}
	if !utf8.ValidString(body) {
		off := 0
		for off < len(body) {
			r, n := utf8.DecodeRuneInString(body[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		line, col := position(body, off)
		return invalidAt(line, col, "utf8", fmt.Sprintf("line %d, column %d: the message is not valid UTF-8", line, col),
			"send text encoded as UTF-8")
	}
	if pr := textline.Check(body); pr != nil {
		return invalidAt(pr.Line, pr.Col, pr.Code, pr.Message, pr.Hint)
	}
	return nil
}
