package loadbench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/parleyhq/parley/client"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/room"
)

// The read measurements of the server load bench: history pages read from the store (cold)
// and again from the page cache (cached), and the state record of one topic in a small room
// and in a large one that holds the same messages on that topic among many on others.

// stateTopic is the topic whose state record is timed, and stateOnTopic how many messages
// both rooms hold on it.
const (
	stateTopic   = "limiter"
	stateOnTopic = 500
)

// DefaultStateMessages is the size of the large state room when the config leaves it unset.
const DefaultStateMessages = 50000

// stateRooms are the two rooms the state and history figures read.
type stateRooms struct {
	small, large string
	seat         *parley.Caller // a seat of the large room (for State there)
	smallSeat    *parley.Caller
	largeToken   string // its token, for reading the large room's history over HTTP
}

// buildStateRooms creates the small room (stateOnTopic messages, all on stateTopic) and the
// large one (total messages: the same stateOnTopic on stateTopic, spread evenly, and the rest
// on a hundred other topics). Messages go straight into the store, several appends at once
// so that SQLite commits them in groups: the post pipeline would only slow the set-up down,
// and State reads what the store holds. Each is a valid convention message as the pipeline
// would have stored it, its tokens counted with o200k_base.
func buildStateRooms(ctx context.Context, store parley.Store, svc *room.Service, admin *parley.Caller, prefix string, total int) (*stateRooms, error) {
	enc, err := bpe.Get("o200k_base")
	if err != nil {
		return nil, err
	}
	sr := &stateRooms{small: prefix + "-state-small", large: prefix + "-state-large"}
	seats := []string{"lead", "builder", "review", "ops"}
	for _, r := range []string{sr.small, sr.large} {
		if _, err := svc.CreateRoom(ctx, admin, r, nil); err != nil {
			return nil, err
		}
		for _, s := range seats {
			_, tok, err := svc.AddSeat(ctx, admin, r, s, parley.RoleAgent)
			if err != nil {
				return nil, err
			}
			if s == "lead" {
				c, err := svc.Authenticate(ctx, tok)
				if err != nil {
					return nil, err
				}
				if r == sr.large {
					sr.seat, sr.largeToken = c, tok
				} else {
					sr.smallSeat = c
				}
			}
		}
	}
	onTopic := min(stateOnTopic, total)
	every := total / onTopic
	// message i of a room: on the topic every `every`-th, numbered k among those.
	msg := func(room string, i int, k int, topic string) *parley.Message {
		seat := seats[i%len(seats)]
		body := stateBody(k, i, topic, seat, seats[(i+1)%len(seats)])
		h := sha256.Sum256([]byte(body))
		return &parley.Message{Room: room, Seat: seat, Time: time.Now().UTC(), Format: parley.FormatConvention,
			Topic: topic, Intent: intentOf(k), Body: body, Tokens: enc.Count(body), Hash: h[:]}
	}
	small := make([]*parley.Message, onTopic)
	for k := range small {
		small[k] = msg(sr.small, k, k, stateTopic)
	}
	large := make([]*parley.Message, total)
	for i := range large {
		if i%every == 0 && i/every < onTopic {
			k := i / every
			large[i] = msg(sr.large, i, k, stateTopic)
			large[i].Seat = small[k].Seat
			large[i].Body, large[i].Tokens, large[i].Hash = small[k].Body, small[k].Tokens, small[k].Hash
		} else {
			large[i] = msg(sr.large, i, i, fmt.Sprintf("topic%02d", i%100))
		}
	}
	// One room at a time, in order within the room: seqs follow the slice, with several
	// appends in flight so the store can commit them together.
	for _, msgs := range [][]*parley.Message{small, large} {
		if err := appendAll(ctx, store, msgs); err != nil {
			return nil, err
		}
	}
	return sr, nil
}

// appendAll appends msgs with a few dozen in flight. Seqs are handed out in commit order, so
// the order within the room is roughly, not exactly, the slice's; nothing read depends on it.
func appendAll(ctx context.Context, store parley.Store, msgs []*parley.Message) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(msgs) || ctx.Err() != nil {
					return
				}
				if _, err := store.Append(ctx, &parley.Append{Message: msgs[i]}); err != nil {
					once.Do(func() { first = fmt.Errorf("append to %s: %w", msgs[i].Room, err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func intentOf(k int) string {
	return [...]string{"report", "decide", "note", "report", "propose"}[k%5]
}

// stateBody is a convention message of the kind agents send, unique by k and i, with lines
// for every part of a state record.
func stateBody(k, i int, topic, from, to string) string {
	switch intentOf(k) {
	case "report":
		return fmt.Sprintf("v1 report %s to %s n=5\noutcome step %d of %d finished\ndone#1 wrote part %d of the limiter\nev#1 run bench-%d\ntodo review part %d\nclaim part %d holds under load\n", topic, to, k, i, k, i, k, k)
	case "decide":
		return fmt.Sprintf("v1 decide %s to all n=2\nuse a token bucket for batch %d\nkeep the burst at %d\n", topic, k, 10+k%7)
	case "propose":
		return fmt.Sprintf("v1 propose %s to %s n=2\nopt/a split the queue at %d\nopt/b keep one queue for %d\n", topic, to, k, i)
	}
	return fmt.Sprintf("v1 note %s to all n=2\noutcome %s checked batch %d\ncost %d tokens for batch %d\n", topic, from, k, 100+k, i)
}

// timeState returns the median time of State on the topic, as the seat, over n calls (after
// one not timed).
func timeState(ctx context.Context, svc *room.Service, c *parley.Caller, room string, n int) (float64, error) {
	var times []time.Duration
	for i := range n + 1 {
		t0 := time.Now()
		if _, err := svc.State(ctx, c, room, stateTopic); err != nil {
			return 0, fmt.Errorf("state of %s: %w", room, err)
		}
		if i > 0 {
			times = append(times, time.Since(t0))
		}
	}
	slices.Sort(times)
	return ms(times[len(times)/2]), nil
}

// timeHistoryPages reads every full page of the room's history (default page size) over HTTP
// as the seat: first from the store, then `reads` times from the page cache, and returns the
// bytes per second of the first pass and the median of the others, in MiB/s. Each page was
// asked for with HEAD before, untimed, which counts it (tokenizing its messages) without
// streaming or caching it: both passes find the token counts known, and the cold one measures
// the store, rendering and hashing rather than the tokenizer's first look.
func timeHistoryPages(ctx context.Context, admin *client.Client, room, token string, messages, reads int) (cold, cached float64, pages int, err error) {
	c := admin.WithToken(token)
	path := "/v1/rooms/" + room + "/history"
	for after := 0; after < messages; after += parley.HistoryPageMessages {
		// HEAD plans the page (and counts the read, tokenizing it) without streaming it,
		// so nothing is cached.
		resp, err := c.Do(ctx, client.Request{Method: "HEAD", Path: path + "?after=" + strconv.Itoa(after)})
		if err != nil {
			return 0, 0, 0, err
		}
		resp.Body.Close()
	}
	pass := func() (float64, error) {
		var size int
		t0 := time.Now()
		// Full pages only: the last page, which reaches the end of the room, may grow.
		for after := 0; after+parley.HistoryPageMessages <= messages; after += parley.HistoryPageMessages {
			p, err := c.HistoryRange(ctx, nil, room, int64(after), 0)
			if err != nil {
				return 0, err
			}
			b := p.Body
			size += len(b)
		}
		return float64(size) / time.Since(t0).Seconds() / (1 << 20), nil
	}
	pages = messages / parley.HistoryPageMessages
	if pages == 0 {
		return 0, 0, 0, nil
	}
	if cold, err = pass(); err != nil {
		return 0, 0, 0, err
	}
	// The cached pass is short, so one stall of a busy machine would decide it: the median
	// of several.
	var rates []float64
	for range max(reads, 1) {
		r, err := pass()
		if err != nil {
			return 0, 0, 0, err
		}
		rates = append(rates, r)
	}
	slices.Sort(rates)
	return cold, rates[len(rates)/2], pages, nil
}
