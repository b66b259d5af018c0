package loadbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/parleyhq/parley/client"
	"github.com/parleyhq/parley/internal/version"
)

// poster is one seat's HTTP client for the posting phases: what client.Client.Post sends
// (POST …/messages with the seat's bearer token, a text/plain body, Accept: application/json)
// over the same pooled keep-alive connections (the http.Transport), but with the parts that
// never change between posts built once, so that the client's own allocations, which count
// in the bench's figures, are only the request's and net/http's. It calls the transport
// itself: a post follows no redirect and keeps no cookie, and its deadline is the caller's
// context, set once per phase rather than as a timer per request (http.Client.Timeout).
// Each post is read to its end and checked (201 and a seq) before post returns, so the
// seat's next waits for the acknowledgement as before.
type poster struct {
	rt     http.RoundTripper
	url    *url.URL
	header http.Header // shared by every request: net/http reads it and never writes it
	buf    []byte      // the body being built, reused
	resp   bytes.Buffer
	limit  io.LimitedReader // caps the answer's read, reused
}

func newPoster(rt http.RoundTripper, base, room, token string) (*poster, error) {
	u, err := url.Parse(base + client.RoomPath(room, "messages"))
	if err != nil {
		return nil, err
	}
	return &poster{rt: rt, url: u, header: http.Header{
		"Authorization": {"Bearer " + token},
		"Accept":        {"application/json"},
		"Content-Type":  {"text/plain; charset=utf-8"},
		"User-Agent":    {"parley-client/" + version.String()},
	}}, nil
}

// postBody is a request body over the poster's buffer.
type postBody struct{ bytes.Reader }

func (*postBody) Close() error { return nil }

// post sends body (which the poster may keep until the next call) and returns its seq.
func (p *poster) post(ctx context.Context, body []byte) (int64, error) {
	rb := &postBody{}
	rb.Reset(body)
	req := (&http.Request{
		Method: http.MethodPost, URL: p.url, Host: p.url.Host, Header: p.header,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: rb, ContentLength: int64(len(body)),
	}).WithContext(ctx)
	resp, err := p.rt.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("POST %s: %w", p.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		if resp.StatusCode >= 400 {
			return 0, client.DecodeError(resp)
		}
		return 0, fmt.Errorf("POST %s: status %s, want 201 Created", p.url, resp.Status)
	}
	p.resp.Reset()
	p.limit.R, p.limit.N = resp.Body, 1<<20
	_, err = p.resp.ReadFrom(&p.limit)
	p.limit.R = nil
	if err != nil {
		return 0, fmt.Errorf("reading the server's answer: %w", err)
	}
	if seq, ok := leadingSeq(p.resp.Bytes()); ok && json.Valid(p.resp.Bytes()) {
		return seq, nil
	}
	var ans struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(p.resp.Bytes(), &ans); err != nil || ans.Seq <= 0 {
		return 0, fmt.Errorf("the server's answer %q has no seq (%v)", p.resp.Bytes(), err)
	}
	return ans.Seq, nil
}

// leadingSeq reads the seq of an answer that starts {"seq":N followed by , or } (the server
// writes its fields in that order), without decoding the rest into values; ok is false for
// anything else, which the caller then decodes in full. N must be a positive whole number.
func leadingSeq(b []byte) (seq int64, ok bool) {
	const prefix = `{"seq":`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return 0, false
	}
	b = b[len(prefix):]
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i == 18 || (i == 0 && b[i] == '0') {
			return 0, false // no leading zero; and never overflows
		}
		seq = seq*10 + int64(b[i]-'0')
	}
	if i == 0 || i == len(b) || (b[i] != ',' && b[i] != '}') {
		return 0, false
	}
	return seq, true
}

// loadPostTo appends the i-th post to dst: a status report of the kind agents send, unique by its
// counter so that dedup never refuses it, addressed to another seat of the room.
func loadPostTo(dst []byte, i int, from, to string) []byte {
	return fmt.Appendf(dst, "v1 report load to %s n=4\noutcome batch %d of %s finished\ndone#1 parsed the input and wrote the summary\nev#1 run load-%d\ntodo next batch after review\n", to, i, from, i)
}
