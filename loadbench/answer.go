package loadbench

import (
	"bufio"
	"bytes"
	"io"
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
