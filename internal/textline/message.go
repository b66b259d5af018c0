package textline

import (
	"strconv"

	"github.com/parleyhq/parley"
)

// TimeFormat is how history writes a message's server time: ISO basic, UTC, with seconds.
const TimeFormat = "20060102T150405Z"

// AppendMessage appends one message's history block to dst, the one rendering of a stored
// message as text that every edge shows (history pages, each SSE event, `parley read`):
//
//	#<seq> <seat> <time>\n
//	<body, line by line>\n
//	<each note>\n
//	\n
//
// The body's lines are AppendBody's: each line ends in LF (a CRLF is written as LF; a body
// without a final line end gets one), and anything stored before the line rules that could
// break a line or pass for a header or a note is shown escaped as [U+XXXX]. For every body
// the rules accept, that is the body as posted, with CRLF as LF. Every block ends with a blank
// line, so the text after any seq is exactly a suffix of the whole.
func AppendMessage(dst []byte, m *parley.Message) []byte {
	dst = append(dst, '#')
	dst = strconv.AppendInt(dst, m.Seq, 10)
	dst = append(dst, ' ')
	dst = append(dst, m.Seat...)
	dst = append(dst, ' ')
	dst = m.Time.UTC().AppendFormat(dst, TimeFormat)
	dst = append(dst, '\n')
	dst = AppendBody(dst, m.Body)
	for _, n := range m.Notes {
		dst = AppendNote(dst, n)
		dst = append(dst, '\n')
	}
	return append(dst, '\n')
}
