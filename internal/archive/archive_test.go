package archive

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

var t0 = time.Date(2026, 9, 19, 12, 0, 0, 123456000, time.UTC)

func example() *parley.RoomArchive {
	due := t0.Add(time.Hour)
	revoked := t0.Add(time.Minute)
	return &parley.RoomArchive{
		Room: &parley.Room{Name: "team", Policy: parley.DefaultPolicy(), CreatedAt: t0},
		Seats: []*parley.Seat{
			{Room: "team", Name: "lead", Role: parley.RoleAgent, CreatedAt: t0},
			{Room: "team", Name: "yu", Role: parley.RoleHuman, CreatedAt: t0, RevokedAt: &revoked},
		},
		Messages: []*parley.Message{
			{Room: "team", Seq: 1, Seat: "lead", Time: t0, Format: "convention", Topic: "limiter", Intent: "request",
				Body: "v1 request limiter to yu n=1\nask <port> & \"host\"?\u2028\x00\ttab\n", Tokens: 17, Hash: []byte{1, 2, 3}, IdempotencyKey: "k1"},
			{Room: "team", Seq: 2, Seat: "yu", Time: t0.Add(time.Second), Format: "text", Re: 1, Body: "ünïcödé",
				Tokens: 3, Notes: []string{"! a note", "another"}},
		},
		Asks: []*parley.Ask{{Room: "team", Seq: 1, Line: 2, From: "lead", To: "yu", Topic: "limiter", Text: "<port>?", Due: &due,
			Default: "8080", Decider: "yu", State: parley.AskAnswered, ClosedBy: 2}},
		Runs:  []*parley.Run{{Room: "team", ID: "ci-1", Commit: "abc", Passed: 3, Failed: 1, Seat: "lead", Time: t0}},
		Stats: map[string]map[string]int64{"yu": {"read_tokens": 40, "reads": 2}},
	}
}

func write(t *testing.T, a *parley.RoomArchive) string {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Room(a.Room, int64(len(a.Messages))))
	for _, s := range a.Seats {
		must(w.Seat(s))
	}
	for _, m := range a.Messages {
		must(w.Message(m))
	}
	for _, k := range a.Asks {
		must(w.Ask(k))
	}
	for _, r := range a.Runs {
		must(w.Run(r))
	}
	must(w.Stat("yu", "read_tokens", 40))
	must(w.Stat("yu", "reads", 2))
	must(w.End())
	return b.String()
}

func TestRoundTrip(t *testing.T) {
	a := example()
	text := write(t, a)
	if n := strings.Count(text, "\n"); n != 10 {
		t.Errorf("%d lines, want 10:\n%s", n, text)
	}
	got, err := Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("Read: %v\n%s", err, text)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, a)
	}
	if strings.Contains(text, "token_hash") {
		t.Errorf("a seat's token hash is written")
	}
	// Written twice, the same bytes.
	if again := write(t, got); again != text {
		t.Errorf("a second write differs")
	}
}

func TestReadRefusals(t *testing.T) {
	lines := strings.SplitAfter(write(t, example()), "\n")
	join := func(ls ...string) string { return strings.Join(ls, "") }
	long := `{"kind":"room","name":"` + strings.Repeat("x", MaxLine) + `"}` + "\n"
	cases := []struct{ name, text, want string }{
		{"empty", "", "the export is empty"},
		{"not a room first", join(lines[1:]...), `line 1: the first record is "seat", not "room"`},
		{"a later version", strings.Replace(join(lines...), `"version":1`, `"version":2`, 1), "line 1: format version 2"},
		{"no end", join(lines[:9]...), "line 10: the file ends without its end record"},
		{"after the end", join(lines...) + lines[1], "line 11: more after the end record"},
		{"a blank line", join(lines[:3]...) + "\n" + join(lines[3:]...), "line 4: empty line"},
		{"out of order", join(lines[0], lines[3], lines[1], lines[2], join(lines[4:]...)), "line 3: a seat record after the messages"},
		{"a gap", join(lines[0], lines[1], lines[2], lines[4], join(lines[5:]...)), "line 4: message #2 where #1 belongs"},
		{"another room", strings.Replace(join(lines...), `"kind":"run","room":"team"`, `"kind":"run","room":"else"`, 1), `line 7: run "ci-1" of room "else"`},
		{"unknown kind", join(lines[:8]...) + `{"kind":"photo"}` + "\n" + join(lines[8:]...), `line 9: unknown record kind "photo"`},
		{"bad hash", strings.Replace(join(lines...), `"hash":"010203"`, `"hash":"zz"`, 1), "line 4: message #1: hash is not hex"},
		{"two values", strings.Replace(join(lines...), "\n", " {}\n", 1), "line 1: room: more than one JSON value"},
		{"too long", long, "line 1: longer than"},
		{"last seq", strings.Replace(join(lines...), `"last_seq":2`, `"last_seq":3`, 1), "line 10: the room record says the last message is #3"},
	}
	for _, tc := range cases {
		_, err := Read(strings.NewReader(tc.text))
		if parley.ErrorCode(err) != parley.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want EINVALID with %q", tc.name, err, tc.want)
		}
	}
}
