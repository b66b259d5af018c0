package bench

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/sharedtest"
)

// mustEncodings returns both real tokenizers.
func mustEncodings(tb testing.TB) []Encoding {
	tb.Helper()
	var out []Encoding
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		e, err := bpe.Get(name)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func mustStudy(tb testing.TB) *Study {
	tb.Helper()
	st, err := LoadStudy(EmbeddedStudy())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func TestLoadStudy(t *testing.T) {
	st := mustStudy(t)
	var names []string
	for _, m := range st.Messages {
		names = append(names, m.Name)
		if m.Facts != 13 {
			t.Errorf("%s has %d facts, want 13", m.Name, m.Facts)
		}
		for _, f := range []string{"prose.txt", "message.json", "convention.txt", "aacp.txt"} {
			if _, err := m.File(f); err != nil {
				t.Error(err)
			}
		}
	}
	if got := strings.Join(names, ","); got != "p1,p2,p3" {
		t.Errorf("messages %s, want p1,p2,p3", got)
	}
	if st.Facts() != 39 {
		t.Errorf("%d facts in the thread, want 39", st.Facts())
	}
	if _, err := st.Messages[0].File("nope.txt"); err == nil {
		t.Error("a missing file was found")
	}

	bad := map[string]fstest.MapFS{
		"no message folders": {"README.md": {Data: []byte("x")}},
		"broken facts.json":  {"p1/facts.json": {Data: []byte("{")}},
		"no facts":           {"p1/facts.json": {Data: []byte(`{"facts": []}`)}},
	}
	for name, fsys := range bad {
		if _, err := LoadStudy(fsys); err == nil {
			t.Errorf("%s: LoadStudy succeeded", name)
		}
	}
}

// TestEmbeddedMatchesShared keeps the embedded copy honest against the shared fixtures.
func TestEmbeddedMatchesShared(t *testing.T) {
	const shared = "../../shared/study"
	if _, err := os.Stat(shared); err != nil {
		sharedtest.Absent(t, "the shared study folder %s is absent; nothing to compare the embedded copy with", shared)
	}
	err := fs.WalkDir(os.DirFS(shared), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		want, err := os.ReadFile(shared + "/" + p)
		if err != nil {
			return err
		}
		got, err := fs.ReadFile(EmbeddedStudy(), p)
		if err != nil {
			t.Errorf("embedded copy lacks %s", p)
			return nil
		}
		if string(got) != string(want) {
			t.Errorf("embedded %s differs from %s/%s: copy the folder again", p, shared, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// referenceCounts parses the study README's table of reference token counts:
// "| convention.txt | 125 / 127 | 127 / 127 | 147 / 150 |" gives, for each message and
// file, the o200k_base and cl100k_base counts.
func referenceCounts(tb testing.TB) map[[3]string]int {
	tb.Helper()
	readme, err := fs.ReadFile(EmbeddedStudy(), "README.md")
	if err != nil {
		tb.Fatal(err)
	}
	out := map[[3]string]int{}
	var msgs []string
	sc := bufio.NewScanner(strings.NewReader(string(readme)))
	for sc.Scan() {
		cells := strings.Split(strings.Trim(strings.TrimSpace(sc.Text()), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) == 4 && cells[0] == "file" {
			msgs = cells[1:]
			continue
		}
		if msgs == nil || len(cells) != 4 || !strings.Contains(cells[0], ".") {
			continue
		}
		for i, c := range cells[1:] {
			o, cl, ok := strings.Cut(c, "/")
			no, err1 := strconv.Atoi(strings.TrimSpace(o))
			nc, err2 := strconv.Atoi(strings.TrimSpace(cl))
			if !ok || err1 != nil || err2 != nil {
				tb.Fatalf("cannot read reference cell %q", c)
			}
			out[[3]string{msgs[i], cells[0], "o200k_base"}] = no
			out[[3]string{msgs[i], cells[0], "cl100k_base"}] = nc
		}
	}
	if len(out) != 4*3*2 {
		tb.Fatalf("read %d reference counts from the study README, want 24", len(out))
	}
	return out
}

// TestReferenceCounts checks every file the study README lists against its reference
// counts, in both encodings, through the same formats the benchmark measures.
func TestReferenceCounts(t *testing.T) {
	ref := referenceCounts(t)
	res, err := Formats(mustStudy(t), Config{Encodings: mustEncodings(t)})
	if err != nil {
		t.Fatal(err)
	}
	fileOf := map[string]string{"prose": "prose.txt", "json": "message.json", "convention": "convention.txt", "aacp": "aacp.txt"}
	checked := 0
	for _, r := range res.Rows {
		f, ok := fileOf[r.Format]
		if !ok {
			continue
		}
		want := ref[[3]string{r.Message, f, r.Encoding}]
		if r.Tokens != want {
			t.Errorf("%s/%s %s: %d tokens, reference %d", r.Message, f, r.Encoding, r.Tokens, want)
		}
		checked++
	}
	if checked != 24 {
		t.Errorf("checked %d counts, want 24", checked)
	}
	// The study's own published messages must count exactly what the study reported.
	for _, r := range res.Rows {
		if r.Format == "convention" && r.Encoding == "o200k_base" {
			if want := map[string]int{"p2": 127, "p3": 147}[r.Message]; want != 0 && r.Tokens != want {
				t.Errorf("%s convention: %d tokens, the study published %d", r.Message, r.Tokens, want)
			}
		}
	}
}

func TestDerivedFormats(t *testing.T) {
	st := mustStudy(t)
	for _, m := range st.Messages {
		src, _ := m.File("message.json")
		min, err := minifiedJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if json.Unmarshal([]byte(src), &a) != nil || json.Unmarshal([]byte(min), &b) != nil {
			t.Fatalf("%s: minified JSON does not parse", m.Name)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: minifying changed the data", m.Name)
		}
		if strings.Count(min, "\n") != 1 || !strings.HasSuffix(min, "}\n") {
			t.Errorf("%s: minified JSON is not one line with a final newline: %q", m.Name, min)
		}
		tn, err := toonText(m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(tn, "\n") || strings.HasSuffix(tn, "\n\n") || strings.ContainsAny(tn, "{}") && !strings.Contains(tn, "]{") {
			t.Errorf("%s: TOON text looks wrong:\n%s", m.Name, tn)
		}
		if !strings.HasPrefix(tn, "message_type: ") {
			t.Errorf("%s: TOON does not keep the source key order:\n%s", m.Name, tn)
		}
	}
	// A study without message.json cannot be minified or encoded.
	bare := Message{Name: "px", Files: map[string]string{}}
	if _, err := minifiedJSON(bare); err == nil {
		t.Error("minifiedJSON without message.json succeeded")
	}
	bare.Files["message.json"] = "{"
	if _, err := toonText(bare); err == nil {
		t.Error("toonText of broken JSON succeeded")
	}
}

func TestBreakEven(t *testing.T) {
	tests := []struct {
		name                         string
		grammar, saved, msgs, reader int
		want                         int // 0 means never (nil)
	}{
		{"no grammar, cheaper", 0, 30, 3, 5, 1},
		{"no grammar, dearer", 0, -30, 3, 5, 0},
		{"same cost", 0, 0, 3, 5, 0},
		// 5 readers + writer hold 210: 1260; saving 100/message over 5 readers: 500 per
		// message; 3 messages pay 1500 >= 1260, 2 pay 1000 < 1260.
		{"study-like", 210, 300, 3, 5, 3},
		{"exact boundary", 100, 120, 1, 5, 1}, // 6*100 = 600 = 1*5*120
		{"one reader", 100, 10, 1, 1, 20},     // 2*100 / 10
		{"grammar, dearer", 100, -5, 3, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := breakEven(tt.grammar, tt.saved, tt.msgs, tt.reader)
			switch {
			case tt.want == 0 && got != nil:
				t.Errorf("break-even %d, want never", *got)
			case tt.want != 0 && (got == nil || *got != tt.want):
				t.Errorf("break-even %v, want %d", got, tt.want)
			}
		})
	}
}

// byteCount is a stand-in tokenizer: one token per byte, so expected numbers are easy to
// work out by hand.
type byteCount struct{}

func (byteCount) Name() string       { return "bytes" }
func (byteCount) Count(s string) int { return len(s) }

func TestFormatsArithmetic(t *testing.T) {
	st := &Study{Messages: []Message{
		{Name: "a", Facts: 2, Files: map[string]string{"j": "0123456789", "c": "0123"}},
		{Name: "b", Facts: 3, Files: map[string]string{"j": "01234567890123456789", "c": "012345"}},
	}}
	formats := []Format{
		{Name: Baseline, Label: "J", Render: file("j")},
		{Name: "c", Label: "C", Render: file("c"), Grammar: "0123456789", GrammarSource: "ten bytes"},
	}
	res, err := Formats(st, Config{Formats: formats, Encodings: []Encoding{byteCount{}}, Readers: 2})
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []Row{
		{"a", Baseline, "bytes", 10, 5}, {"b", Baseline, "bytes", 20, 6.67},
		{"a", "c", "bytes", 4, 2}, {"b", "c", "bytes", 6, 2},
	}
	if len(res.Rows) != len(wantRows) {
		t.Fatalf("%d rows, want %d", len(res.Rows), len(wantRows))
	}
	for i, w := range wantRows {
		if res.Rows[i] != w {
			t.Errorf("row %d = %+v, want %+v", i, res.Rows[i], w)
		}
	}
	c := res.Threads[1]
	if c.Tokens != 10 || c.Facts != 5 || c.TokensPerFact != 2 || len(c.Messages) != 2 {
		t.Errorf("thread %+v", c)
	}
	// Saving: (30-10)/2 = 10 per message and reader. Tax: 3 seats × 10 = 30. Two readers
	// save 20 a message: the second message pays (40 >= 30).
	g := res.Grammar[1]
	if g.GrammarTokens != 10 || g.TaxTokens != 30 || g.SavingPerMessage != 10 || g.MeanTokens != 5 ||
		g.BreakEven == nil || *g.BreakEven != 2 || g.Verdict != "after 2 messages" || g.Holds != "ten bytes" {
		t.Errorf("grammar row %+v", g)
	}
	if b := res.Grammar[0]; b.Verdict != "baseline" || b.BreakEven != nil || b.Holds != "nothing" {
		t.Errorf("baseline row %+v", b)
	}
	if len(res.Constructs) != len(Constructs()) {
		t.Errorf("%d construct rows for one encoding, want %d", len(res.Constructs), len(Constructs()))
	}

	if _, err := Formats(st, Config{Formats: formats[1:], Encodings: []Encoding{byteCount{}}}); err == nil {
		t.Error("no error without the baseline")
	}
	if _, err := Formats(st, Config{Formats: formats}); err == nil {
		t.Error("no error without encodings")
	}
	if _, err := Formats(st, Config{Formats: formats, Encodings: []Encoding{byteCount{}}, Readers: -1}); err == nil {
		t.Error("no error for negative readers")
	}
	if _, err := Formats(st, Config{Formats: []Format{{Name: Baseline, Render: file("missing")}}, Encodings: []Encoding{byteCount{}}}); err == nil {
		t.Error("no error for a missing file")
	}
}

// TestConstructCosts pins the construct table to the study's figures where it gave them.
func TestConstructCosts(t *testing.T) {
	o := mustEncodings(t)[0]
	want := map[string]int{
		"2026-09-19T12:00:00Z": 13, "20260919T1200Z": 7, "job-rl-0917": 6, "limiter": 2,
		"i_5fBAXDeXWz": 10, "⏰": 3, "deadline": 1, "dl": 1,
	}
	for _, c := range Constructs() {
		if w, ok := want[c.Text]; ok && o.Count(c.Text) != w {
			t.Errorf("%q: %d tokens in o200k_base, the study measured %d", c.Text, o.Count(c.Text), w)
		}
	}
}

func TestGrammarTexts(t *testing.T) {
	o := mustEncodings(t)[0]
	// The cards are meant to be short; a card that grows past the convention's study size
	// (210 tokens) defeats its purpose.
	for name, text := range map[string]string{"AACPCard": AACPCard, "TOONPrimer": TOONPrimer} {
		if n := o.Count(text); n == 0 || n > 210 {
			t.Errorf("%s is %d tokens", name, n)
		}
		if !strings.HasSuffix(text, "\n") {
			t.Errorf("%s lacks a final newline", name)
		}
	}
}

func BenchmarkFormats(b *testing.B) {
	st := mustStudy(b)
	encs := mustEncodings(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Formats(st, Config{Encodings: encs}); err != nil {
			b.Fatal(err)
		}
	}
}
