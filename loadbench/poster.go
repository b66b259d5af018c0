package loadbench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/parleyhq/parley/client"
)

// poster is one seat's HTTP client for the posting phases: it sends what client.Client.Post
// sends (POST …/messages with the seat's bearer token, a text/plain body, Accept:
// application/json), over one keep-alive connection of its own, as HTTP/1.1 on the wire, and
// reads each answer: a plain 201 with a Content-Length body (nearly every one) with
// readCreated, held to net/http's parser by FuzzReadCreated, and any other with net/http's own
// (http.ReadResponse). The request's head never
// changes between posts, so it is written once and each post appends its length and body;
// without http.Transport's pool and its two goroutines per connection, the client's share of
// the bench's CPU and allocations (which count in its figures, the client running in the same
// process) is the request's bytes and the answer's parse. The deadline of a post is its
// context's (the phase's), set on the connection; a cancelled context stops the next post, and
// a post in flight waits for its answer or the deadline. Each post
// is read to its end and checked (201 and a seq) before post returns, so the seat's next waits
// for the acknowledgement. Like http.Transport, it never sends a post again by itself: a
// connection the server closed fails the post, and the next post dials a new one.
type poster struct {
	url  *url.URL
	head []byte // the request line and headers, up to the Content-Length value
	buf  []byte // the body being built, reused
	out  []byte // the request being written, reused

	conn     net.Conn
	br       *bufio.Reader
	deadline time.Time // the deadline set on conn

	resp  bytes.Buffer
	limit io.LimitedReader // caps the answer's read, reused
}

func newPoster(base, room, token string) (*poster, error) {
	u, err := url.Parse(base + client.RoomPath(room, "messages"))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the bench posts over plain HTTP to host:port, not %q", base)
	}
	head := "POST " + u.RequestURI() + " HTTP/1.1\r\n" +
		"Host: " + u.Host + "\r\n" +
		"User-Agent: " + client.DefaultUserAgent() + "\r\n" +
		"Authorization: Bearer " + token + "\r\n" +
		"Accept: application/json\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" +
		"Content-Length: "
	return &poster{url: u, head: []byte(head)}, nil
}

// Close closes the poster's connection, if it has one.
func (p *poster) Close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn = nil
	}
}

// connect returns the poster's connection for a post under ctx, dialling one if it has none.
func (p *poster) connect(ctx context.Context) (net.Conn, error) {
	if p.conn == nil {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.url.Host)
		if err != nil {
			return nil, err
		}
		p.conn, p.deadline = c, time.Time{}
		if p.br == nil {
			p.br = bufio.NewReaderSize(c, 4<<10)
		} else {
			p.br.Reset(c)
		}
	}
	if dl, _ := ctx.Deadline(); !dl.Equal(p.deadline) {
		if err := p.conn.SetDeadline(dl); err != nil {
			return nil, err
		}
		p.deadline = dl
	}
	return p.conn, nil
}

// post sends body (which the poster may keep until the next call) and returns its seq.
func (p *poster) post(ctx context.Context, body []byte) (seq int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	broken := true // until the answer is read to its end
	defer func() {
		if broken {
			p.Close() // the connection's state is unknown: the next post dials again
		}
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
	}()
	conn, err := p.connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", p.url, err)
	}
	p.out = strconv.AppendInt(append(p.out[:0], p.head...), int64(len(body)), 10)
	p.out = append(append(p.out, "\r\n\r\n"...), body...)
	if _, err := conn.Write(p.out); err != nil {
		return 0, fmt.Errorf("POST %s: %w", p.url, err)
	}
	if ok, err := readCreated(p.br, &p.resp); ok {
		// The common answer, read without http.ReadResponse's header map and body reader.
		if err != nil {
			return 0, fmt.Errorf("reading the server's answer: %w", err)
		}
		broken = false
		return p.seqOf()
	}
	resp, err := http.ReadResponse(p.br, nil)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %w", p.url, err)
	}
	if resp.StatusCode != http.StatusCreated {
		if resp.StatusCode >= 400 {
			err := client.DecodeError(resp)
			broken = resp.Close || resp.Body.Close() != nil
			return 0, err
		}
		return 0, fmt.Errorf("POST %s: status %s, want 201 Created", p.url, resp.Status)
	}
	p.resp.Reset()
	p.limit.R, p.limit.N = resp.Body, maxAnswer
	_, err = p.resp.ReadFrom(&p.limit)
	p.limit.R = nil
	if err != nil {
		return 0, fmt.Errorf("reading the server's answer: %w", err)
	}
	// Closing a body read to its end leaves the connection at the next answer.
	broken = resp.Close || resp.Body.Close() != nil
	return p.seqOf()
}

// seqOf returns the seq of the answer read into p.resp.
func (p *poster) seqOf() (int64, error) {
	return answerSeq(p.resp.Bytes())
}

// loadPostTo appends the i-th post to dst: a status report of the kind agents send, unique by its
// counter so that dedup never refuses it, addressed to another seat of the room.
func loadPostTo(dst []byte, i int, from, to string) []byte {
	// Built with appends rather than fmt (TestLoadPost compares them): the client's CPU
	// counts in the bench's figures.
	dst = append(append(append(dst, "v1 report load to "...), to...), " n=4\noutcome batch "...)
	dst = append(append(append(strconv.AppendInt(dst, int64(i), 10), " of "...), from...), " finished\n"...)
	dst = append(dst, "done#1 parsed the input and wrote the summary\nev#1 run load-"...)
	return append(strconv.AppendInt(dst, int64(i), 10), "\ntodo next batch after review\n"...)
}
