package loadbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
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

// clientSeq is what client.Client.Post makes of an answer body: encoding/json's decoding into
// parley.PostResult, and whether it holds a positive seq.
func clientSeq(b []byte) (int64, bool) {
	var res parley.PostResult
	if err := json.Unmarshal(b, &res); err != nil || res.Seq <= 0 {
		return 0, false
	}
	return res.Seq, true
}

// TestAnswerSeq checks the answer's seq on hand-worked answers: which the fast read takes
// (plainAnswer), and that answerSeq agrees with encoding/json on each.
func TestAnswerSeq(t *testing.T) {
	for _, c := range []struct {
		in    string
		seq   int64 // 0: answerSeq fails
		plain bool  // read without the JSON decoder
	}{
		{`{"seq":7,"tokens":30,"notes":[],"warnings":[]}` + "\n", 7, true},
		{`{"seq":7,"tokens":30,"notes":[],"warnings":[]}`, 7, true},
		{`{"seq":9876543210,"tokens":0,"notes":[],"warnings":[]}`, 9876543210, true},
		{`{"seq":123456789012345678,"tokens":1,"notes":[],"warnings":[]}`, 123456789012345678, true},
		// What the server answers the bench's posts: a note on the evidence.
		{`{"seq":1,"tokens":46,"notes":["! ev#1 unverified: run load-1 not found; a runner seat must post it first"],"warnings":[]}` + "\n", 1, true},
		{`{"seq":2,"tokens":4,"notes":["a","","b"],"warnings":[]}`, 2, true},
		{`{"seq":3,"tokens":4,"notes":["q\"b\\s\/\b\f\n\r\t\u00e9\uD83D\uDE00 é"],"warnings":[]}`, 3, true},
		{"{\"seq\":4,\"tokens\":4,\"notes\":[\"bad utf-8 \xff\"],\"warnings\":[]}", 4, true}, // decoded as U+FFFD
		{`{"seq":5,"tokens":4,"notes":["\x"],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["\u12"],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["\u12g4"],"warnings":[]}`, 0, false},
		{"{\"seq\":5,\"tokens\":4,\"notes\":[\"a\tb\"],\"warnings\":[]}", 0, false}, // a raw tab
		{`{"seq":5,"tokens":4,"notes":["a",],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":[,"a"],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["a""b"],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":[1],"warnings":[]}`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["a"],"warnings":[]`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["a`, 0, false},
		{`{"seq":5,"tokens":4,"notes":["a\`, 0, false},
		{`{"seq":5,"tokens":4,"notes":[ "a"],"warnings":[]}`, 5, false},
		// 19 digits: still a seq, decoded in full.
		{`{"seq":1234567890123456789,"tokens":1,"notes":[],"warnings":[]}`, 1234567890123456789, false},
		// Other shapes of a good answer: decoded in full.
		{`{"seq": 12,"tokens":4,"notes":[],"warnings":[]}`, 12, false},
		{`{"tokens":4,"seq":12,"notes":[],"warnings":[]}`, 12, false},
		{`{"seq":12}`, 12, false},
		{`{"seq":12,"tokens":4,"notes":["n"],"warnings":[{"line":1,"col":1,"severity":"warning","code":"x","message":"m"}]}`, 12, false},
		{`{"seq":3e2,"tokens":4,"notes":[],"warnings":[]}`, 0, false},          // not an int64 to encoding/json
		{`{"seq":12,"tokens":4,"notes":[],"warnings":[]}x`, 0, false},          // trailing bytes
		{`{"seq":12,"tokens":4,"notes":[],"warnings":[]}` + "\n\n", 12, false}, // whitespace
		// No seq, or not one: errors, never a seq of 0.
		{`{"seq":0,"tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":-3,"tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":1.5,"tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":012,"tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":"12","tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":12,"tokens":04,"notes":[],"warnings":[]}`, 0, false},
		{`{"seq":12,"tokens":-4,"notes":[],"warnings":[]}`, 12, false}, // the decoder takes it
		{`{"seq":12,"tokens":4,"notes":[],"warnings":[]`, 0, false},
		{`{"seq":12,"notes":5}`, 0, false}, // the client cannot read it either
		{`{"tokens":4,"notes":[],"warnings":[]}`, 0, false},
		{`{}`, 0, false},
		{``, 0, false},
		{`null`, 0, false},
		{`{"error":{"code":"EINVALID","message":"m","hint":"h"}}`, 0, false},
	} {
		seq, ok := plainAnswer([]byte(c.in))
		if ok != c.plain || (ok && seq != c.seq) {
			t.Errorf("plainAnswer(%s) = %d, %v; want %d, %v", c.in, seq, ok, c.seq, c.plain)
		}
		seq, err := answerSeq([]byte(c.in))
		if seq != c.seq || (err == nil) != (c.seq > 0) {
			t.Errorf("answerSeq(%s) = %d, %v; want %d", c.in, seq, err, c.seq)
		}
		if err != nil && !strings.Contains(err.Error(), "the server's answer") {
			t.Errorf("answerSeq(%s): the error %q does not say what was wrong", c.in, err)
		}
		if want, ok := clientSeq([]byte(c.in)); want != seq || ok != (err == nil) {
			t.Errorf("answerSeq(%s) = %d, %v; encoding/json reads %d, %v", c.in, seq, err, want, ok)
		}
	}
}

// FuzzAnswerSeq holds answerSeq to client.Client's reading of an answer (encoding/json into
// parley.PostResult): the same seq, or an error where it finds none; and every answer the
// fast read takes is valid JSON whose first field is "seq", with that number.
func FuzzAnswerSeq(f *testing.F) {
	for _, s := range []string{
		`{"seq":7,"tokens":30,"notes":[],"warnings":[]}` + "\n", `{"seq":1,"tokens":0,"notes":[],"warnings":[]}`,
		`{"seq":12}`, `{"seq":1,"seq":2}`, `{"seq":3e2}`, `{"seq":12,}`, `{"SEQ":5}`,
		`{"seq":12,"tokens":4,"notes":["n"],"warnings":[]}`, `{"seq":0,"tokens":0,"notes":[],"warnings":[]}`,
		`{"seq":1,"tokens":46,"notes":["! ev#1 unverified: run load-1 not found","\u00e9\n"],"warnings":[]}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seq, err := answerSeq(b)
		want, ok := clientSeq(b)
		if seq != want || (err == nil) != ok {
			t.Fatalf("answerSeq(%q) = %d, %v; encoding/json reads %d, %v", b, seq, err, want, ok)
		}
		pseq, plain := plainAnswer(b)
		if !plain {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		open, _ := dec.Token()
		key, _ := dec.Token()
		val, verr := dec.Token()
		n, _ := val.(json.Number)
		first, nerr := n.Int64()
		if !json.Valid(b) || open != json.Delim('{') || key != "seq" || verr != nil || nerr != nil || first != pseq || pseq != seq {
			t.Fatalf("plainAnswer(%q) = %d; encoding/json reads %v %v %v (%v)", b, pseq, open, key, val, verr)
		}
	})
}

// TestAnswerReadsNoAllocation checks that taking the server's usual answer off the
// connection, head and body, and reading its seq allocates nothing: the client's side of
// each post counts in the bench's mallocs per post.
func TestAnswerReadsNoAllocation(t *testing.T) {
	answer := strings.Replace(created, "Content-Length: 45", "Content-Length: 47", 1)
	src := strings.NewReader(answer)
	br := bufio.NewReaderSize(src, 4096)
	var dst bytes.Buffer
	dst.Grow(64)
	allocs := testing.AllocsPerRun(200, func() {
		src.Reset(answer)
		br.Reset(src)
		ok, err := readCreated(br, &dst)
		if !ok || err != nil {
			t.Fatalf("readCreated: %v, %v", ok, err)
		}
		if seq, err := answerSeq(dst.Bytes()); seq != 7 || err != nil {
			t.Fatalf("answerSeq: %d, %v", seq, err)
		}
	})
	if allocs != 0 {
		t.Errorf("reading an answer allocates %.1f times, want 0", allocs)
	}
}
