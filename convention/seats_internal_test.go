package convention

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// refParseSeats is parseSeats as it was written before it kept the addressees in the
// message's own buffers: strings.SplitSeq over each token, appending to nil slices. The new
// one must give the same addressees, columns and diagnostics on every token list.
func (m *Message) refParseSeats(ts []tok) []Diagnostic {
	p := &m.pos
	var diags []Diagnostic
	errAt := func(col int, msg, fix string) {
		p.broken = true
		diags = append(diags, Diagnostic{Line: p.line, Col: col, Severity: SeverityError, Code: "header", Message: msg, Fix: fix})
	}
	if len(ts) == 0 {
		errAt(p.to+2, "to names no seat: write to <seat>, several as to a,b, or to all", "")
		return diags
	}
	for j, t := range ts {
		if j > 0 && !strings.HasSuffix(ts[j-1].s, ",") && !strings.HasPrefix(t.s, ",") {
			names := []string{}
			for _, t := range ts {
				names = append(names, strings.Trim(t.s, ","))
			}
			errAt(t.col, "addressees are separated by commas, with no spaces", "to "+strings.Join(names, ","))
			return diags
		}
	}
	for _, t := range ts {
		off := 0
		for part := range strings.SplitSeq(t.s, ",") {
			col := t.col + off
			off += len(part) + 1
			if part == "" {
				continue
			}
			if !validSeat(part) {
				fix := ""
				if c := strings.TrimLeft(part, "@"); validSeat(c) {
					fix = c
				}
				errAt(col, quote(part)+" cannot be a seat name: seat names are letters, digits, '.', '_' and '-'", fix)
				continue
			}
			m.Header.To = append(m.Header.To, part)
			p.seats = append(p.seats, col)
		}
	}
	if len(m.Header.To) == 0 && len(diags) == 0 {
		errAt(ts[0].col, "to names no seat: write to <seat>, several as to a,b, or to all", "")
	}
	return diags
}

// checkSeats parses the addressee list s both ways and compares everything parseSeats sets.
func checkSeats(t *testing.T, s string) {
	t.Helper()
	ts := tokens(s)
	var got, want Message
	got.pos.to, want.pos.to = 7, 7
	gd, wd := got.parseSeats(ts), want.refParseSeats(ts)
	if !reflect.DeepEqual(gd, wd) || !reflect.DeepEqual(got.Header.To, want.Header.To) ||
		!reflect.DeepEqual(got.pos.seats, want.pos.seats) || got.pos.broken != want.pos.broken {
		t.Fatalf("parseSeats(%q):\n got %q %v %v %v\nwant %q %v %v %v", s,
			got.Header.To, got.pos.seats, got.pos.broken, gd, want.Header.To, want.pos.seats, want.pos.broken, wd)
	}
}

var seatSeeds = []string{"", "lead", "lead,yu", "lead, yu", "lead ,yu", "lead yu", ",", ",,", "a,,b", "@lead",
	"lead,@yu,", ",lead", "lead,yu,builder", "a,b,c,d,e", "all", "s03", "lé", "a b,c", "a,\u00a0b", strings.Repeat("x", 65)}

func TestParseSeatsAsBefore(t *testing.T) {
	for _, s := range seatSeeds {
		checkSeats(t, s)
	}
	// Generated lists: names good and bad, commas and spaces in every arrangement.
	parts := []string{"lead", "yu", "s03", "@lead", "", "a.b", "x!", "all", "日本"}
	seps := []string{",", ", ", " ,", " ", ",,", " , "}
	r := rand.New(rand.NewPCG(17, 25))
	for range 5000 {
		var b strings.Builder
		for k := range 1 + r.IntN(5) {
			if k > 0 {
				b.WriteString(seps[r.IntN(len(seps))])
			}
			b.WriteString(parts[r.IntN(len(parts))])
		}
		checkSeats(t, b.String())
	}
	// A message keeps its own addressees: two parsed messages share nothing.
	a, _ := Parse("v1 note t to lead,yu n=0\n")
	b, _ := Parse("v1 note t to s03 n=0\n")
	if fmt.Sprint(a.Header.To, b.Header.To) != "[lead yu] [s03]" {
		t.Fatalf("addressees: %q and %q", a.Header.To, b.Header.To)
	}
}

func FuzzParseSeats(f *testing.F) {
	for _, s := range seatSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkSeats(t, s) })
}
