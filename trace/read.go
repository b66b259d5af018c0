package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// RawSession is a session as read from a stream of JSON lines: its id and its records as
// JSON objects. The records need not be trace records: a codec carries any JSON object.
type RawSession struct {
	ID      string
	Records []Value
}

// StreamSessionID names the session that the bare record lines of a stream form.
const StreamSessionID = "stdin"

// ReadSessions reads a stream of JSON lines, one per line, in either of two forms:
//
//   - a session line {"id":…,"records":[…]}, as `parley a2c normalize` prints it. Its
//     records must be trace records (RecordFromValue); they come back in canonical member
//     order, each one a RawSession of its own.
//   - any other JSON object: one record, kept exactly as written (members in their
//     order, duplicates kept). All such lines of the stream form one session named
//     StreamSessionID, placed where the first of them appears.
//
// Blank lines are skipped. A line that is not JSON, is not an object, or is a session
// line whose records do not read as trace records is an error naming its line number
// (1-based). Lines may be up to 1 GiB long.
func ReadSessions(r io.Reader) ([]RawSession, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var out []RawSession
	loose := -1
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v, err := ParseJSON(b)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if recs, ok := v.Get("records"); ok && recs.Kind == Array {
			s, err := SessionFromValue(&v)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			rs := RawSession{ID: s.ID, Records: make([]Value, len(s.Records))}
			for i := range s.Records {
				rs.Records[i] = s.Records[i].Value()
			}
			out = append(out, rs)
			continue
		}
		if v.Kind != Object {
			return nil, fmt.Errorf("line %d: want a session or a record object", n)
		}
		if loose < 0 {
			loose = len(out)
			out = append(out, RawSession{ID: StreamSessionID})
		}
		out[loose].Records = append(out[loose].Records, v)
	}
	return out, sc.Err()
}
