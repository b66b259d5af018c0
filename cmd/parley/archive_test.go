package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/pgtest"
	"github.com/parleyhq/parley/internal/servertest"
)

// runAdmin runs one parley command against a server with its admin token.
func runAdmin(t *testing.T, s *servertest.Server, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: bytes.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(k string) string {
		return map[string]string{"PARLEY_URL": s.URL, "PARLEY_ADMIN_TOKEN": s.Admin}[k]
	}}
	code := dispatch(t.Context(), e, args)
	return code, out.String(), errOut.String()
}

// fillRoom gives room on s what a move must carry: every format, topics, asks open with a
// time, answered and open without one, a run record, a revoked seat, and enough messages for
// several pages.
func fillRoom(t *testing.T, s *servertest.Server, room string) {
	ctx := t.Context()
	s.CreateRoom(t, room, map[string]any{"format": "lenient", "seat_messages_per_minute": 1e6, "seat_burst": 1000, "room_burst": 1000, "room_messages_per_minute": 1e6})
	lead := s.Client(s.AddSeat(t, room, "lead", "agent"))
	yu := s.Client(s.AddSeat(t, room, "yu", "human"))
	ci := s.Client(s.AddSeat(t, room, "ci", "runner"))
	s.AddSeat(t, room, "gone", "agent")
	post := func(c interface {
		Post(context.Context, *parley.Caller, string, []byte, string) (*parley.PostResult, error)
	}, body string) int64 {
		t.Helper()
		res, err := c.Post(ctx, nil, room, []byte(body), "")
		if err != nil {
			t.Fatalf("post %q: %v", body, err)
		}
		return res.Seq
	}
	post(lead, "v1 note limiter to all n=1\noutcome route test green\n")
	post(lead, "v1 request limiter to yu n=2\nask merge the limiter now?, 20990101T0000Z\ndefault silence past the ask time→merge as is\n")
	asked := post(lead, "v1 request limiter to yu n=1\nask which port does the limiter listen on?\n")
	post(yu, fmt.Sprintf("v1 decide limiter to lead re %d n=1\noutcome port 8080, said <yu> & \"lead\"\n", asked))
	post(yu, "just a plain line from a person, with ünïcödé and a tab\there")
	for i := range 30 {
		post(lead, fmt.Sprintf("v1 note pages to all n=1\ncost %d tokens\n", 1000+i))
	}
	if _, err := ci.PostRun(ctx, nil, room, "application/json", []byte(`{"id":"ci-1","commit":"3f9a2c1","passed":12,"failed":1}`), ""); err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := s.Client(s.Admin).RevokeSeat(ctx, nil, room, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := yu.HistoryAll(ctx, nil, room, 0); err != nil { // a read, counted in the stats
		t.Fatal(err)
	}
}

// pages reads the room's history page by page, limit messages a page, following the server's
// next-after header.
func pages(t *testing.T, s *servertest.Server, room string, limit int) [][]byte {
	t.Helper()
	var out [][]byte
	after := int64(0)
	for {
		p, err := s.Client(s.Admin).HistoryRange(t.Context(), nil, room, after, limit)
		if err != nil {
			t.Fatalf("history after %d on %s: %v", after, s.Name, err)
		}
		out = append(out, p.Body)
		if p.Next == 0 {
			return out
		}
		after = p.Next
	}
}

// views are what a room shows its readers, besides history: each seat's inbox, as JSON and
// as text, and the state of each topic.
func views(t *testing.T, s *servertest.Server, room string, tokens map[string]string) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	for seat, tok := range tokens {
		c := s.Client(tok)
		in, err := c.Inbox(ctx, nil, room)
		if err != nil {
			t.Fatalf("inbox of %s on %s: %v", seat, s.Name, err)
		}
		b, _ := json.Marshal(in)
		out["inbox "+seat] = string(b)
		txt, err := c.InboxText(ctx, nil, room)
		if err != nil {
			t.Fatal(err)
		}
		out["inbox text "+seat] = string(txt)
	}
	admin := s.Client(s.Admin)
	for _, topic := range []string{"limiter", "pages"} {
		st, err := admin.State(ctx, nil, room, topic)
		if err != nil {
			t.Fatalf("state of %s on %s: %v", topic, s.Name, err)
		}
		b, _ := json.Marshal(st)
		out["state "+topic] = string(b)
	}
	seats, err := admin.Seats(ctx, nil, room)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(seats)
	out["seats"] = string(b)
	r, err := admin.Room(ctx, nil, room)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(r)
	out["room"] = string(b)
	return out
}

// rotateAll gives every active seat of room on s a token, as an operator does after an
// import, and returns them.
func rotateAll(t *testing.T, s *servertest.Server, room string) map[string]string {
	t.Helper()
	tokens := map[string]string{}
	for _, seat := range []string{"lead", "yu", "ci"} {
		tok, err := s.Client(s.Admin).RotateSeat(t.Context(), nil, room, seat)
		if err != nil {
			t.Fatalf("rotate %s on %s: %v", seat, s.Name, err)
		}
		tokens[seat] = tok
	}
	return tokens
}

// TestExportImportAcrossStores moves a room from SQLite to PostgreSQL and back with the CLI,
// and holds the moved room to serving what the original served, byte for byte.
func TestExportImportAcrossStores(t *testing.T) {
	lite := servertest.InProcess(t, servertest.InProcessOptions{})
	lite.Name = "sqlite"
	pg := servertest.InProcess(t, servertest.InProcessOptions{PostgresDSN: pgtest.DSN(t)})
	pg.Name = "postgres"
	back := servertest.InProcess(t, servertest.InProcessOptions{})
	back.Name = "sqlite again"
	fillRoom(t, lite, "team")

	code, exported, errOut := runAdmin(t, lite, nil, "export", "team")
	if code != 0 || !strings.HasSuffix(exported, "\n") {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{`{"kind":"room","version":1,"name":"team"`, `"kind":"seat"`, `"revoked_at"`, `"kind":"ask"`, `"state":"answered"`, `"kind":"run"`, `"kind":"stat"`, `{"kind":"end","seats":4,"messages":35,`} {
		if !strings.Contains(exported, want) {
			t.Errorf("the export lacks %s", want)
		}
	}
	if strings.Contains(exported, "token") && strings.Contains(exported, "hash\":\"") && strings.Contains(exported, `"token_hash"`) {
		t.Errorf("the export holds a token hash")
	}

	code, out, errOut := runAdmin(t, pg, []byte(exported), "import", "-")
	if code != 0 || !strings.Contains(out, "imported room team: 35 message(s) (last #35), 2 ask(s), 1 run(s)") ||
		!strings.Contains(out, "seats without a token: ci, gone, lead, yu") || !strings.Contains(out, "parley seat rotate team NAME") {
		t.Fatalf("import into postgres: exit %d\n%s%s", code, out, errOut)
	}

	// History, whole and page by page, is the same bytes.
	whole := lite.History(t, "team", lite.Admin)
	if got := pg.History(t, "team", pg.Admin); got != whole {
		t.Fatalf("history differs after the move:\n--- sqlite\n%s\n--- postgres\n%s", whole, got)
	}
	for _, limit := range []int{1, 7, 0} {
		a, b := pages(t, lite, "team", limit), pages(t, pg, "team", limit)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("pages of %d differ after the move: %d pages vs %d", limit, len(a), len(b))
		}
		if limit == 7 && len(a) != 6 { // five full pages, then the empty one that says the room ends there
			t.Errorf("%d pages of 7 for 35 messages", len(a))
		}
	}

	// Inboxes, state records, seats and policy are the same.
	liteTokens, pgTokens := rotateAll(t, lite, "team"), rotateAll(t, pg, "team")
	va, vb := views(t, lite, "team", liteTokens), views(t, pg, "team", pgTokens)
	for k := range va {
		if va[k] != vb[k] {
			t.Errorf("%s differs after the move:\n sqlite   %s\n postgres %s", k, va[k], vb[k])
		}
	}
	if !strings.Contains(va["inbox yu"], "merge the limiter now?") || strings.Contains(va["inbox yu"], "which port") {
		t.Errorf("yu's inbox is not what the room holds: %s", va["inbox yu"])
	}

	// The export of the moved room is the export of the original, byte for byte; and back.
	code, again, errOut := runAdmin(t, pg, nil, "export", "team")
	if code != 0 || again != exported {
		t.Fatalf("the export of the moved room differs (exit %d, %s):\n%s", code, errOut, firstDiff(exported, again))
	}
	if code, out, errOut := runAdmin(t, back, []byte(again), "import", "-"); code != 0 {
		t.Fatalf("import back into sqlite: exit %d\n%s%s", code, out, errOut)
	}
	if got := back.History(t, "team", back.Admin); got != whole {
		t.Fatalf("history differs after the way back")
	}
	if _, third, _ := runAdmin(t, back, nil, "export", "team"); third != exported {
		t.Fatalf("the export after the way back differs:\n%s", firstDiff(exported, third))
	}

	// The moved room goes on: the next post is #36, and the seat's new token works.
	res, err := pg.Client(pgTokens["lead"]).Post(t.Context(), nil, "team", []byte("v1 note limiter to all n=1\noutcome moved\n"), "")
	if err != nil || res.Seq != 36 {
		t.Fatalf("the first post after the move: %+v, %v", res, err)
	}
	// A repeat of an imported message is still refused as one.
	_, err = pg.Client(pgTokens["lead"]).Post(t.Context(), nil, "team", []byte("v1 note pages to all n=1\ncost 1029 tokens\n"), "")
	if parley.ErrorCode(err) != parley.ECONFLICT {
		t.Errorf("a repeat of imported #35: %v, want a conflict", err)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n want %s\n  got %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(al), len(bl))
}

// TestImportRefusals: an existing room, and files that are not whole exports, are refused
// with the line named, and store nothing.
func TestImportRefusals(t *testing.T) {
	s := servertest.InProcess(t, servertest.InProcessOptions{})
	fillRoom(t, s, "team")
	_, exported, _ := runAdmin(t, s, nil, "export", "team")

	code, _, errOut := runAdmin(t, s, []byte(exported), "import", "-")
	if code == 0 || !strings.Contains(errOut, "room team exists on this server") {
		t.Errorf("import over an existing room: exit %d\n%s", code, errOut)
	}

	other := strings.Replace(exported, `"name":"team"`, `"name":"copy"`, 1)
	other = strings.ReplaceAll(other, `"room":"team"`, `"room":"copy"`)
	lines := strings.SplitAfter(other, "\n")
	cases := []struct {
		name, file, want string
	}{
		{"not JSON", strings.Join(lines[:2], "") + "{oops\n" + strings.Join(lines[3:], ""), "line 3: not a JSON object"},
		{"cut short", strings.Join(lines[:20], ""), "line 21: the file ends without its end record"},
		{"a gap", strings.Join(lines[:6], "") + strings.Join(lines[7:], ""), "where #"},
		{"unknown field", strings.Replace(other, `"kind":"run",`, `"kind":"run","colour":"red",`, 1), `unknown field "colour"`},
		{"not an export", "hello\n", "line 1: not a JSON object"},
		{"empty", "", "the export is empty"},
		{"counts", strings.Replace(other, `"kind":"end","seats":4`, `"kind":"end","seats":5`, 1), "the end record counts 5 seats"},
	}
	for _, tc := range cases {
		code, out, errOut := runAdmin(t, s, []byte(tc.file), "import", "-")
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, want an error with %q\n%s%s", tc.name, code, tc.want, out, errOut)
		}
	}
	if _, err := s.Client(s.Admin).Room(t.Context(), nil, "copy"); parley.ErrorCode(err) != parley.ENOTFOUND {
		t.Errorf("a refused import left room copy behind: %v", err)
	}
	// The whole file imports under its new name.
	if code, out, errOut := runAdmin(t, s, []byte(other), "import", "-"); code != 0 {
		t.Fatalf("import of the renamed export: exit %d\n%s%s", code, out, errOut)
	}

	// A seat cannot export or import.
	tok := s.AddSeat(t, "team", "nosy", "admin")
	var errBuf bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &errBuf, getenv: func(k string) string {
		return map[string]string{"PARLEY_URL": s.URL, "PARLEY_TOKEN": tok}[k]
	}}
	if code := dispatch(t.Context(), e, []string{"export", "team"}); code == 0 || !strings.Contains(errBuf.String(), "only the server admin exports rooms") {
		t.Errorf("export as a seat: exit %d\n%s", code, errBuf.String())
	}

	// --out never overwrites.
	path := filepath.Join(t.TempDir(), "team.jsonl")
	if err := os.WriteFile(path, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runAdmin(t, s, nil, "export", "team", "--out", path); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("export --out over a file: exit %d\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Errorf("export --out overwrote the file")
	}
}
