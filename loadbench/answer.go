package loadbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/parleyhq/parley"
)

// maxAnswer caps the body of an answer the poster reads.
const maxAnswer = 1 << 20

// readCreated reads, from br, an answer that is plainly a 201 Created with a Content-Length
// body, the answer of nearly every post, into dst (reset first), without http.ReadResponse's
// header map and body reader. It reads only what http.ReadResponse would read the same way:
// a status line "HTTP/1.1 201" (with a reason or none), header lines of a token name and a
// value of printable ASCII, one Content-Length of decimal digits, at most maxAnswer, and no
// Connection, Transfer-Encoding or Trailer header. Anything else is left unread (ok false),
// and the caller reads it with http.ReadResponse, which reads the same bytes from the start:
// refusals, redirects, chunked or closing answers. FuzzReadCreated holds it to
// http.ReadResponse on every answer it takes.
//
// With ok true and err nil, the answer is read to its end and the connection is at the next
// one. With ok true and an error, the body was cut short (the connection is unusable).
func readCreated(br *bufio.Reader, dst *bytes.Buffer) (ok bool, err error) {
	head, err := peekHead(br)
	if err != nil || head == nil {
		return false, nil
	}
	const status = "HTTP/1.1 201"
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if !bytes.HasPrefix(line, []byte(status)) || (len(line) > len(status) && line[len(status)] != ' ') ||
		!printable(line) {
		return false, nil
	}
	length := int64(-1)
	for len(rest) > 2 { // the head ends in an empty line
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found || len(name) == 0 || !tokenName(name) || !printable(value) {
			return false, nil
		}
		value = bytes.Trim(value, " \t")
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if length >= 0 || len(value) == 0 || len(value) > 7 {
				return false, nil
			}
			length = 0
			for _, c := range value {
				if c < '0' || c > '9' {
					return false, nil
				}
				length = length*10 + int64(c-'0')
			}
		case asciiEqualFold(name, "Connection"), asciiEqualFold(name, "Transfer-Encoding"),
			asciiEqualFold(name, "Trailer"):
			return false, nil
		}
	}
	if length < 0 || length > maxAnswer {
		return false, nil
	}
	br.Discard(len(head))
	dst.Reset()
	dst.Grow(int(length))
	// The body is copied out of br's buffer, where it nearly always is already, rather than
	// through io.CopyN and the reader it makes per answer.
	for n := int(length); n > 0; {
		b, err := br.Peek(min(n, br.Size()))
		dst.Write(b)
		br.Discard(len(b))
		n -= len(b)
		if err != nil && n > 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return true, err
		}
	}
	return true, nil
}

// peekHead returns the answer's status line and headers through the empty line that ends
// them, peeked (not read) from br, waiting for more bytes while they are not all there; nil
// when they do not fit br's buffer.
func peekHead(br *bufio.Reader) ([]byte, error) {
	want := 1
	for {
		b, err := br.Peek(want)
		if err != nil {
			return nil, err
		}
		b, _ = br.Peek(br.Buffered())
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			return b[:i+4], nil
		}
		if len(b) >= br.Size() {
			return nil, nil
		}
		want = len(b) + 1
	}
}

// tokenName reports whether a header name is made of the letters, digits and dashes that
// header names are written with (a strict part of what net/http takes).
func tokenName(b []byte) bool {
	for _, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// printable reports whether b is printable ASCII and tabs.
func printable(b []byte) bool {
	for _, c := range b {
		if (c < ' ' && c != '\t') || c > '~' {
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether b is s in any ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c, d := b[i], s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= d && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// answerSeq returns the seq of a post's answer body, as client.Client.Post reads it (into
// a parley.PostResult), and an error when the answer is not one or has no positive seq: a
// 201 without its seq means the bench cannot tell what the server stored. The answer the
// server writes to the bench's posts, {"seq":N,"tokens":N,"notes":[…],"warnings":[]} and a
// newline (a note says the post's evidence is unverified), is read by plainAnswer without a
// JSON decoder; any other (warnings, fields in another order, spaces) is decoded in full by
// encoding/json.
func answerSeq(b []byte) (int64, error) {
	if seq, ok := plainAnswer(b); ok {
		return seq, nil
	}
	var ans parley.PostResult
	if err := json.Unmarshal(b, &ans); err != nil {
		return 0, fmt.Errorf("the server's answer %q is not a post's answer: %v", b, err)
	}
	if ans.Seq <= 0 {
		return 0, fmt.Errorf("the server's answer %q has no seq (a positive whole number)", b)
	}
	return ans.Seq, nil
}

// plainAnswer reads an answer that is exactly {"seq":S,"tokens":T,"notes":[N…],"warnings":[]},
// with or without a final newline: S a positive and T a non-negative whole number of at most
// 18 digits, written as JSON writes them (no sign, no leading zero), and the notes none or
// JSON strings separated by commas. ok is false for anything else, which is then decoded in
// full. Every answer it takes is valid JSON whose seq is S (FuzzAnswerSeq holds it to
// encoding/json).
func plainAnswer(b []byte) (seq int64, ok bool) {
	b, ok = cutPrefix(b, `{"seq":`)
	if !ok {
		return 0, false
	}
	if seq, b, ok = cutNumber(b); !ok || seq == 0 {
		return 0, false
	}
	if b, ok = cutPrefix(b, `,"tokens":`); !ok {
		return 0, false
	}
	if _, b, ok = cutNumber(b); !ok {
		return 0, false
	}
	if b, ok = cutPrefix(b, `,"notes":[`); !ok {
		return 0, false
	}
	for first := true; len(b) > 0 && b[0] != ']'; first = false {
		if !first {
			if b, ok = cutPrefix(b, ","); !ok {
				return 0, false
			}
		}
		if b, ok = cutString(b); !ok {
			return 0, false
		}
	}
	const tail = `],"warnings":[]}`
	if string(b) != tail && string(b) != tail+"\n" {
		return 0, false
	}
	return seq, true
}

// cutPrefix returns b after prefix, if b starts with it.
func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// cutNumber reads the whole number that b starts with, as JSON writes one (0, or 1 to 18
// digits without a leading zero), and returns it and the rest of b.
func cutNumber(b []byte) (n int64, rest []byte, ok bool) {
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		if i == 18 || (i == 1 && b[0] == '0') {
			return 0, b, false // a leading zero; or more digits than an int64 surely holds
		}
		n = n*10 + int64(b[i]-'0')
	}
	return n, b[i:], i > 0
}

// cutString returns b after the JSON string it starts with: a quote, then bytes other than
// control characters, quotes and backslashes, or the escapes JSON allows, then a quote.
// Like encoding/json, it leaves UTF-8 unchecked (the decoder would replace bad bytes, not
// refuse them).
func cutString(b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return b, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[i+1:], true
		case c < 0x20:
			return b, false
		case c == '\\':
			i++
			if i == len(b) {
				return b, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return b, false
				}
				for _, h := range b[i+1 : i+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return b, false
					}
				}
				i += 4
			default:
				return b, false
			}
		}
	}
	return b, false
}
