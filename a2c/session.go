package a2c

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/parleyhq/parley/trace"
)

// Encoded is one session in a2c/1: the payload (header line, then one line per record)
// and the decode instructions that describe the features it uses.
type Encoded struct {
	Header       string   // "a2c/1", "+d" when the dictionary is used, then " " and the id
	Lines        []string // one payload line per record, in order
	Instructions string
	Features     Features
	UsesDict     bool
}

// Payload returns the header and the record lines, each ending in a newline.
func (e *Encoded) Payload() string {
	var b strings.Builder
	b.WriteString(e.Header)
	b.WriteByte('\n')
	for _, l := range e.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// EncodeSession encodes a session's records (JSON objects) with the given options.
func EncodeSession(id string, recs []trace.Value, opt Options) (*Encoded, error) {
	enc := NewEncoder(opt)
	out := &Encoded{Lines: make([]string, len(recs))}
	for i := range recs {
		l, err := enc.Encode(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i+1, err)
		}
		out.Lines[i] = l
	}
	out.Features = enc.Features()
	out.UsesDict = out.Features.Dictionary
	out.Header = Magic
	if out.UsesDict {
		out.Header += "+d"
	}
	if id != "" {
		out.Header += " " + string(appendEscaped(nil, id, '|'))
	}
	out.Instructions = Instructions(out.Features, opt.FullInstructions)
	return out, nil
}

// RecordValues returns the records of a trace session as JSON objects.
func RecordValues(s *trace.Session) []trace.Value {
	out := make([]trace.Value, len(s.Records))
	for i := range s.Records {
		out[i] = s.Records[i].Value()
	}
	return out
}

// ParseHeader reads a header line: whether the dictionary is needed, and the id.
func ParseHeader(line string) (id string, dict bool, err error) {
	rest, ok := strings.CutPrefix(line, Magic)
	if !ok {
		return "", false, &SyntaxError{Line: 1, Msg: fmt.Sprintf("header must start with %q", Magic)}
	}
	if r, ok := strings.CutPrefix(rest, "+d"); ok {
		dict, rest = true, r
	}
	if rest == "" {
		return "", dict, nil
	}
	if rest[0] != ' ' {
		return "", false, &SyntaxError{Line: 1, Msg: "malformed header"}
	}
	r := reader{s: rest[1:], d: &Decoder{line: 1}}
	var buf []byte
	for r.pos < len(r.s) {
		if r.s[r.pos] != '\\' {
			buf = append(buf, r.s[r.pos])
			r.pos++
			continue
		}
		if buf, err = r.escape(buf, "|"); err != nil {
			return "", false, err
		}
	}
	return string(buf), dict, nil
}

// DecodeSession decodes one session payload (header and record lines) and returns the id
// and the records.
func DecodeSession(payload string, dict *Dictionary) (string, []trace.Value, error) {
	lines := strings.Split(strings.TrimSuffix(payload, "\n"), "\n")
	id, needDict, err := ParseHeader(lines[0])
	if err != nil {
		return "", nil, err
	}
	if needDict && dict == nil {
		return "", nil, errors.New("a2c: the payload was encoded with a dictionary; pass it (--dict)")
	}
	if !needDict {
		dict = nil
	}
	dec := NewDecoder(dict)
	out := make([]trace.Value, 0, len(lines)-1)
	for _, rec := range groupRecords(lines[1:]) {
		v, err := dec.Decode(rec)
		if err != nil {
			return id, out, err
		}
		out = append(out, v)
	}
	return id, out, nil
}

// SplitStream splits concatenated payloads (as `parley a2c encode` writes them) at their
// header lines. A record line never starts with the magic: kinds are one letter, ~ or a
// quoted string, and schema-less lines start with {.
func SplitStream(data string) []string {
	var out []string
	start := -1
	for pos := 0; pos < len(data); {
		end := strings.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		if strings.HasPrefix(data[pos:end], Magic) {
			if start >= 0 {
				out = append(out, data[start:pos])
			}
			start = pos
		}
		pos = end + 1
	}
	if start >= 0 {
		out = append(out, data[start:])
	}
	return out
}

// Verify encodes a session, decodes it and compares the canonical JSON of every record.
// It returns the encoding and the number of records that differ.
func Verify(id string, recs []trace.Value, opt Options) (*Encoded, int, error) {
	enc, err := EncodeSession(id, recs, opt)
	if err != nil {
		return nil, 0, err
	}
	var dict *Dictionary
	if enc.UsesDict {
		dict = opt.Dictionary
	}
	gotID, got, err := DecodeSession(enc.Payload(), dict)
	if err != nil {
		return enc, len(recs), err
	}
	bad := 0
	if gotID != id {
		bad++
	}
	for i := range recs {
		if i >= len(got) || !bytes.Equal(trace.Canonical(&recs[i]), trace.Canonical(&got[i])) {
			bad++
		}
	}
	if len(got) > len(recs) {
		bad += len(got) - len(recs)
	}
	return enc, bad, nil
}

// groupRecords joins continuation lines (text that kept its newlines) to the record line
// before them.
func groupRecords(lines []string) []string {
	var out []string
	start := 0
	for i := 1; i <= len(lines); i++ {
		if i == len(lines) || RecordStart(lines[i]) {
			if start < i {
				out = append(out, strings.Join(lines[start:i], "\n"))
			}
			start = i
		}
	}
	return out
}
