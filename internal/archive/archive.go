// Package archive is the file format of `parley export` and `parley import`: a room as JSON
// lines, one record a line, each an object whose "kind" says what it is:
//
//	{"kind":"room","version":1,"name":"limiter","policy":{…},"created_at":"…","last_seq":42}
//	{"kind":"seat","room":"limiter","name":"alice","role":"agent","created_at":"…"}
//	{"kind":"message","room":"limiter","seq":1,"seat":"alice","time":"…","format":"convention","body":"…","tokens":12,"hash":"…"}
//	{"kind":"ask","room":"limiter","seq":3,"line":2,"from":"alice","to":"bob","text":"…","state":"answered","closed_by":5}
//	{"kind":"run","room":"limiter","id":"r1","passed":40,"failed":0,"seat":"ci","time":"…"}
//	{"kind":"stat","seat":"alice","key":"read_tokens","value":1200}
//	{"kind":"end","seats":2,"messages":42,"asks":3,"runs":1,"stats":1}
//
// The room record comes first, then seats, messages in seq order, asks, runs and counters, and
// the end record last, whose counts let a reader tell a whole file from a cut one. Messages
// keep everything history is rendered from (seq, seat, time, format, topic, intent, re, body,
// tokens, notes) and what dedup and idempotency need (the body's hash, hex, and the
// Idempotency-Key), so that a room imported elsewhere serves the same bytes and behaves the
// same. Seats carry no token and no token hash: an imported seat gets a token by rotation.
package archive

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parleyhq/parley"
)

// Version is the format's version, in the room record. A reader refuses a later one.
const Version = 1

// MaxLine bounds one line: a message of the largest policy (1 MiB) escaped as JSON at its
// worst (\u00XX for every byte) with room to spare.
const MaxLine = 8 << 20

type roomRecord struct {
	Kind      string        `json:"kind"`
	Version   int           `json:"version"`
	Name      string        `json:"name"`
	Policy    parley.Policy `json:"policy"`
	CreatedAt time.Time     `json:"created_at"`
	LastSeq   int64         `json:"last_seq"`
}

type seatRecord struct {
	Kind string `json:"kind"`
	*parley.Seat
}

type messageRecord struct {
	Kind string `json:"kind"`
	*parley.Message
	Hash           string `json:"hash,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

type askRecord struct {
	Kind string `json:"kind"`
	*parley.Ask
}

type runRecord struct {
	Kind string `json:"kind"`
	*parley.Run
}

type statRecord struct {
	Kind  string `json:"kind"`
	Seat  string `json:"seat"`
	Key   string `json:"key"`
	Value int64  `json:"value"`
}

type endRecord struct {
	Kind     string `json:"kind"`
	Seats    int    `json:"seats"`
	Messages int    `json:"messages"`
	Asks     int    `json:"asks"`
	Runs     int    `json:"runs"`
	Stats    int    `json:"stats"`
}

// Writer writes one room's records, in the order the format asks for.
type Writer struct {
	w   *bufio.Writer
	end endRecord
}

// NewWriter returns a Writer on w. Call Room first and End last.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), end: endRecord{Kind: "end"}}
}

func (w *Writer) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.w.Write(b)
	return err
}

// Room writes the room record; lastSeq is the seq of the last message the file holds.
func (w *Writer) Room(r *parley.Room, lastSeq int64) error {
	return w.line(roomRecord{Kind: "room", Version: Version, Name: r.Name, Policy: r.Policy, CreatedAt: r.CreatedAt, LastSeq: lastSeq})
}

// Seat writes a seat, without its token hash.
func (w *Writer) Seat(s *parley.Seat) error {
	w.end.Seats++
	return w.line(seatRecord{"seat", s})
}

// Message writes a message.
func (w *Writer) Message(m *parley.Message) error {
	w.end.Messages++
	return w.line(messageRecord{Kind: "message", Message: m, Hash: hex.EncodeToString(m.Hash), IdempotencyKey: m.IdempotencyKey})
}

// Ask writes an ask.
func (w *Writer) Ask(a *parley.Ask) error {
	w.end.Asks++
	return w.line(askRecord{"ask", a})
}

// Run writes a run record.
func (w *Writer) Run(r *parley.Run) error {
	w.end.Runs++
	return w.line(runRecord{"run", r})
}

// Stat writes one counter.
func (w *Writer) Stat(seat, key string, v int64) error {
	w.end.Stats++
	return w.line(statRecord{"stat", seat, key, v})
}

// End writes the end record and flushes.
func (w *Writer) End() error {
	if err := w.line(w.end); err != nil {
		return err
	}
	return w.w.Flush()
}

// Flush writes out what is buffered, for a writer that streams.
func (w *Writer) Flush() error { return w.w.Flush() }

// Read reads a whole export. A malformed file is an EINVALID error naming the line, and what
// was expected there.
func Read(r io.Reader) (*parley.RoomArchive, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	a := &parley.RoomArchive{Stats: map[string]map[string]int64{}}
	var (
		lineNo  int
		lastSeq int64
		ended   bool
		stats   int
		order   = 0 // how far along seat(1) message(2) ask(3) run(4) stat(5) the file is
	)
	fail := func(format string, args ...any) error {
		return parley.Errorf(parley.EINVALID, "line %d: "+format, append([]any{lineNo}, args...)...).
			WithHint("an export file is what `parley export ROOM` wrote, whole and unedited")
	}
	rank := map[string]int{"seat": 1, "message": 2, "ask": 3, "run": 4, "stat": 5}
	for {
		line, err := readLine(br)
		if err == io.EOF {
			break
		}
		lineNo++
		if err != nil {
			if errors.Is(err, errLong) {
				return nil, fail("longer than %d bytes", MaxLine)
			}
			return nil, fmt.Errorf("read export: line %d: %w", lineNo, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fail("empty line")
		}
		if ended {
			return nil, fail("more after the end record")
		}
		var probe struct {
			Kind string `json:"kind"`
		}
		if k, ok := kindPrefix(line); ok {
			// The writer puts the kind first: no need to scan a 1 MiB line twice. The
			// strict decode below still checks the whole line.
			probe.Kind = k
		} else if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fail("not a JSON object: %v", err)
		}
		if lineNo == 1 {
			if probe.Kind != "room" {
				return nil, fail(`the first record is %q, not "room": this is not a parley export`, probe.Kind)
			}
			var rec roomRecord
			if err := strict(line, &rec); err != nil {
				return nil, fail("room: %v", err)
			}
			if rec.Version < 1 || rec.Version > Version {
				return nil, fail("format version %d; this parley reads version %d", rec.Version, Version)
			}
			if rec.Name == "" {
				return nil, fail("the room record names no room")
			}
			a.Room = &parley.Room{Name: rec.Name, Policy: rec.Policy, CreatedAt: rec.CreatedAt}
			lastSeq = rec.LastSeq
			continue
		}
		if n, ok := rank[probe.Kind]; ok {
			if n < order {
				return nil, fail("a %s record after the %ss: records come as room, seats, messages, asks, runs, stats, end", probe.Kind, kindOf(rank, order))
			}
			order = n
		}
		name := a.Room.Name
		switch probe.Kind {
		case "room":
			return nil, fail("a second room record")
		case "seat":
			var s parley.Seat
			if err := strict(line, &seatRecord{Seat: &s}); err != nil {
				return nil, fail("seat: %v", err)
			}
			if s.Room != name {
				return nil, fail("seat %q of room %q in an export of %q", s.Name, s.Room, name)
			}
			a.Seats = append(a.Seats, &s)
		case "message":
			var m parley.Message
			rec := messageRecord{Message: &m}
			if err := strict(line, &rec); err != nil {
				return nil, fail("message: %v", err)
			}
			if m.Room != name {
				return nil, fail("message #%d of room %q in an export of %q", m.Seq, m.Room, name)
			}
			if want := int64(len(a.Messages) + 1); m.Seq != want {
				return nil, fail("message #%d where #%d belongs: messages run 1, 2, 3… with no gap", m.Seq, want)
			}
			h, err := hex.DecodeString(rec.Hash)
			if err != nil {
				return nil, fail("message #%d: hash is not hex: %v", m.Seq, err)
			}
			if len(h) > 0 {
				m.Hash = h
			}
			m.IdempotencyKey = rec.IdempotencyKey
			a.Messages = append(a.Messages, &m)
		case "ask":
			var k parley.Ask
			if err := strict(line, &askRecord{Ask: &k}); err != nil {
				return nil, fail("ask: %v", err)
			}
			if k.Room != name {
				return nil, fail("an ask of room %q in an export of %q", k.Room, name)
			}
			a.Asks = append(a.Asks, &k)
		case "run":
			var r parley.Run
			if err := strict(line, &runRecord{Run: &r}); err != nil {
				return nil, fail("run: %v", err)
			}
			if r.Room != name {
				return nil, fail("run %q of room %q in an export of %q", r.ID, r.Room, name)
			}
			a.Runs = append(a.Runs, &r)
		case "stat":
			var s statRecord
			if err := strict(line, &s); err != nil {
				return nil, fail("stat: %v", err)
			}
			if a.Stats[s.Seat] == nil {
				a.Stats[s.Seat] = map[string]int64{}
			}
			a.Stats[s.Seat][s.Key] = s.Value
			stats++
		case "end":
			var e endRecord
			if err := strict(line, &e); err != nil {
				return nil, fail("end: %v", err)
			}
			got := endRecord{Kind: "end", Seats: len(a.Seats), Messages: len(a.Messages), Asks: len(a.Asks), Runs: len(a.Runs), Stats: stats}
			if e != got {
				return nil, fail("the end record counts %d seats, %d messages, %d asks, %d runs, %d stats; the file holds %d, %d, %d, %d, %d",
					e.Seats, e.Messages, e.Asks, e.Runs, e.Stats, got.Seats, got.Messages, got.Asks, got.Runs, got.Stats)
			}
			if int64(len(a.Messages)) != lastSeq {
				return nil, fail("the room record says the last message is #%d; the file holds %d messages", lastSeq, len(a.Messages))
			}
			ended = true
		default:
			return nil, fail("unknown record kind %q", probe.Kind)
		}
	}
	switch {
	case lineNo == 0:
		return nil, parley.Errorf(parley.EINVALID, "the export is empty").WithHint("an export file is what `parley export ROOM` wrote")
	case !ended:
		return nil, parley.Errorf(parley.EINVALID, "line %d: the file ends without its end record: it was cut short", lineNo+1).
			WithHint("export the room again, and copy the whole file")
	}
	return a, nil
}

// kindPrefix returns the kind of a line that starts {"kind":"<letters>", as the writer writes
// every line.
func kindPrefix(line []byte) (string, bool) {
	const pre = `{"kind":"`
	if !bytes.HasPrefix(line, []byte(pre)) {
		return "", false
	}
	rest := line[len(pre):]
	for i, c := range rest {
		switch {
		case c == '"' && i > 0:
			return string(rest[:i]), true
		case c < 'a' || c > 'z':
			return "", false
		}
	}
	return "", false
}

func kindOf(rank map[string]int, n int) string {
	for k, v := range rank {
		if v == n {
			return k
		}
	}
	return ""
}

var errLong = errors.New("line too long")

// readLine returns the next line without its newline; io.EOF after the last.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxLine {
			return nil, errLong
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// strict decodes one record, refusing fields the format does not have.
func strict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}
