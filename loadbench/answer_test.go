package loadbench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// created is a real answer of the server to a post (its head as net/http writes it).
const created = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nLocation: /v1/rooms/r/history?after=6&limit=1\r\n" +
	"Date: Wed, 02 Dec 2026 05:30:00 GMT\r\nContent-Length: 45\r\n\r\n" +
	`{"seq":7,"tokens":30,"notes":[],"warnings":[]}` + "\n"

// TestReadCreated checks which answers readCreated takes, what it reads of them, and that it
// leaves the others unread for http.ReadResponse.
func TestReadCreated(t *testing.T) {
	body := `{"seq":7,"tokens":30,"notes":[],"warnings":[]}` + "\n"
	if got := strings.Count(created, body); got != 1 || len(body) != 47 {
		t.Fatalf("the fixture is off: %d, %d", got, len(body))
	}
	fixed := strings.Replace(created, "Content-Length: 45", "Content-Length: 47", 1)
	cases := []struct {
		name, answer string
		ok           bool
		body         string // what ok answers read
	}{
		{"plain 201", fixed, true, body},
		{"lower-case names, no reason", "HTTP/1.1 201\r\ncontent-length:  2 \r\n\r\n{}next", true, "{}"},
		{"empty body", "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", true, ""},
		{"a refusal", strings.Replace(fixed, "201 Created", "409 Conflict", 1), false, ""},
		{"HTTP/1.0", strings.Replace(fixed, "HTTP/1.1", "HTTP/1.0", 1), false, ""},
		{"status 2010", "HTTP/1.1 2010 X\r\nContent-Length: 0\r\n\r\n", false, ""},
		{"closing", "HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", false, ""},
		{"chunked", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", false, ""},
		{"no length", "HTTP/1.1 201 Created\r\n\r\n{}", false, ""},
		{"two lengths", "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", false, ""},
		{"signed length", "HTTP/1.1 201 Created\r\nContent-Length: +2\r\n\r\n{}", false, ""},
		{"too long", "HTTP/1.1 201 Created\r\nContent-Length: 1048577\r\n\r\n{}", false, ""},
		{"folded header", "HTTP/1.1 201 Created\r\nX-A: 1\r\n 2\r\nContent-Length: 2\r\n\r\n{}", false, ""},
		{"bare LF", "HTTP/1.1 201 Created\nContent-Length: 2\n\n{}", false, ""},
	}
	for _, c := range cases {
		br := bufio.NewReaderSize(strings.NewReader(c.answer), 4096)
		var dst bytes.Buffer
		ok, err := readCreated(br, &dst)
		if ok != c.ok || err != nil {
			t.Errorf("%s: ok %v, err %v; want ok %v", c.name, ok, err, c.ok)
			continue
		}
		if !ok {
			// Nothing was read: http.ReadResponse gets the answer from its first byte.
			if rest, _ := io.ReadAll(br); string(rest) != c.answer {
				t.Errorf("%s: left %q of the answer", c.name, rest)
			}
			continue
		}
		if dst.String() != c.body {
			t.Errorf("%s: read %q, want %q", c.name, dst.String(), c.body)
		}
	}

	// A body cut short is an error, after the head was taken.
	br := bufio.NewReaderSize(strings.NewReader("HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\n{}"), 4096)
	if ok, err := readCreated(br, new(bytes.Buffer)); !ok || err != io.ErrUnexpectedEOF {
		t.Errorf("short body: ok %v, err %v; want true, unexpected EOF", ok, err)
	}
	// A head that arrives in pieces is waited for.
	br = bufio.NewReaderSize(io.MultiReader(strings.NewReader(fixed[:10]), strings.NewReader(fixed[10:60]), strings.NewReader(fixed[60:])), 4096)
	var dst bytes.Buffer
	if ok, err := readCreated(br, &dst); !ok || err != nil || dst.String() != body {
		t.Errorf("head in pieces: ok %v, err %v, body %q", ok, err, dst.String())
	}
	// A head larger than the buffer is left to net/http.
	big := "HTTP/1.1 201 Created\r\nX-Big: " + strings.Repeat("a", 5000) + "\r\nContent-Length: 2\r\n\r\n{}"
	br = bufio.NewReaderSize(strings.NewReader(big), 4096)
	if ok, _ := readCreated(br, &dst); ok {
		t.Error("a head over the buffer was taken")
	}
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 201 {
		t.Errorf("after a head over the buffer, net/http reads %v, %v", resp, err)
	}
}

// FuzzReadCreated holds readCreated to http.ReadResponse: whatever answer it takes, net/http
// reads as a 201 that does not close the connection, with the same body, and both leave the
// reader at the same byte; a body cut short fails both.
func FuzzReadCreated(f *testing.F) {
	f.Add([]byte(created))
	f.Add([]byte("HTTP/1.1 201\r\ncontent-length:0\r\n\r\nHTTP/1.1 201 Created\r\n"))
	f.Add([]byte("HTTP/1.1 201 Created\r\nContent-Length: 0007\r\nX-A:\t b\r\n\r\n{\"seq\":1}"))
	f.Add([]byte("HTTP/1.1 201 Created\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 201 Created\r\nconnection: Close\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 409 Conflict\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add(longAnswer(9000, 9000)) // a body over the reader's buffer, copied in parts
	f.Add(longAnswer(9000, 5000)) // and one cut short in its second part
	f.Fuzz(func(t *testing.T, answer []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(answer), 4096)
		var dst bytes.Buffer
		ok, err := readCreated(br, &dst)
		if !ok {
			if br.Buffered() != len(answer) && len(answer) <= 4096 {
				t.Fatalf("left the answer with %d of %d bytes read ahead: something was consumed", br.Buffered(), len(answer))
			}
			return
		}
		ref := bufio.NewReaderSize(bytes.NewReader(answer), 4096)
		resp, rerr := http.ReadResponse(ref, nil)
		if rerr != nil {
			t.Fatalf("readCreated took an answer net/http refuses (%v): %q", rerr, answer)
		}
		if resp.StatusCode != 201 || resp.Close || resp.ContentLength < 0 {
			t.Fatalf("net/http reads status %d, close %v, length %d: %q", resp.StatusCode, resp.Close, resp.ContentLength, answer)
		}
		want, berr := io.ReadAll(resp.Body)
		if (err != nil) != (berr != nil) {
			t.Fatalf("body errors differ: readCreated %v, net/http %v", err, berr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(dst.Bytes(), want) {
			t.Fatalf("body %q, net/http %q", dst.Bytes(), want)
		}
		rest, _ := io.ReadAll(br)
		refRest, _ := io.ReadAll(ref)
		if !bytes.Equal(rest, refRest) {
			t.Fatalf("left %q unread, net/http %q", rest, refRest)
		}
	})
}

// longAnswer is a 201 whose head announces a body of n bytes and which carries the first have.
func longAnswer(n, have int) []byte {
	head := fmt.Sprintf("HTTP/1.1 201 Created\r\nContent-Length: %d\r\n\r\n", n)
	return append([]byte(head), bytes.Repeat([]byte("x"), have)...)
}

// TestReadCreatedLongBody reads a body larger than the reader's buffer whole, and one cut
// short as io.ErrUnexpectedEOF, as io.CopyN did.
func TestReadCreatedLongBody(t *testing.T) {
	var dst bytes.Buffer
	br := bufio.NewReaderSize(bytes.NewReader(append(longAnswer(9000, 9000), "next"...)), 4096)
	if ok, err := readCreated(br, &dst); !ok || err != nil || dst.Len() != 9000 {
		t.Fatalf("long body: ok %v, err %v, %d bytes", ok, err, dst.Len())
	}
	if rest, _ := io.ReadAll(br); string(rest) != "next" {
		t.Errorf("after the body: %q", rest)
	}
	br = bufio.NewReaderSize(bytes.NewReader(longAnswer(9000, 5000)), 4096)
	if ok, err := readCreated(br, &dst); !ok || err != io.ErrUnexpectedEOF {
		t.Errorf("short body: ok %v, err %v", ok, err)
	}
}
