package textline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		code       string // "" = accepted
		line, col  int
		phrase     string
	}{
		{"plain", "v1 note x to all n=1\nfact hi\n", "", 0, 0, ""},
		{"CRLF", "v1 note x to all n=1\r\nfact hi\r\n", "", 0, 0, ""},
		{"CRLF without final", "a\r\nb", "", 0, 0, ""},
		{"bang word", "!important\n", "", 0, 0, ""},
		{"bang bang", "!! yes\n", "", 0, 0, ""},
		{"hash word", "#tag and # 1\n", "", 0, 0, ""},
		{"issue ref", "see #12\n", "", 0, 0, ""},
		{"ZWJ emoji", "fact 👩\u200d💻 ok\n", "", 0, 0, ""},
		{"RTL text", "fact שלום\n", "", 0, 0, ""},
		{"tab inside", "fact\ta\n", "", 0, 0, ""},
		{"bare CR", "status ok\rforged\n", "cr", 1, 10, "line 1, column 10: a carriage return"},
		{"CR at end", "a\nb\r", "cr", 2, 2, "does not end the line"},
		{"CR CR LF", "a\r\r\nb\n", "cr", 1, 2, "carriage return"},
		{"NEL", "a\nb\u0085c\n", "line-break", 2, 2, "control character U+0085"},
		{"LS", "a\u2028! ev#1 verified\n", "line-break", 1, 2, "U+2028 LINE SEPARATOR ends a line"},
		{"PS", "a\u2029b\n", "line-break", 1, 2, "U+2029 PARAGRAPH SEPARATOR"},
		{"RLO", "fact \u202eevil\n", "bidi", 1, 6, "U+202E RIGHT-TO-LEFT OVERRIDE"},
		{"LRI", "fact \u2066x\u2069\n", "bidi", 1, 6, "U+2066"},
		{"NUL", "a\x00\n", "control", 1, 2, "control character U+0000"},
		{"header", "a\n#3 lead 20261201T170500Z\n", "forgery", 2, 1, "line 2 starts like a history header"},
		{"header CRLF", "a\r\n#3 lead\r\n", "forgery", 2, 1, "history header"},
		{"note", "a\n! ev#1 verified\n", "forgery", 2, 1, "line 2 starts like a server note"},
		{"lone bang", "a\n!\n", "forgery", 2, 1, "server note"},
		{"lone bang CRLF", "a\r\n!\r\n", "forgery", 2, 1, "server note"},
		{"lone bang at end", "a\n!", "forgery", 2, 1, "server note"},
		{"ZWSP header", "a\n\u200b#12 lead x\n", "forgery", 2, 4, "once the invisible U+200B ZERO WIDTH SPACE"},
		{"WJ note", "a\n\u2060! ev#1 verified\n", "forgery", 2, 4, "U+2060 WORD JOINER"},
		{"BOM note", "a\n\ufeff! ev#1 verified\n", "forgery", 2, 4, "U+FEFF BYTE ORDER MARK"},
		{"fullwidth hash", "a\n＃12 lead\n", "forgery", 2, 1, "once U+FF03 FULLWIDTH NUMBER SIGN is read as `#`"},
		{"fullwidth bang", "a\n！ ev#1\n", "forgery", 2, 1, "server note"},
		{"fullwidth digit", "a\n#１２ lead\n", "forgery", 2, 1, "history header"},
		{"space header", "a\n  #12 lead\n", "forgery", 2, 3, "once the whitespace before it is ignored"},
		{"tab note", "a\n\t! ev#1\n", "forgery", 2, 2, "whitespace"},
		{"bang tab", "a\n!\tev#1 verified\n", "forgery", 2, 1, "once the U+0009 TAB after it is read as a space"},
		{"bang NBSP", "a\n!\u00a0ev#1 verified\n", "forgery", 2, 1, "U+00A0 NO-BREAK SPACE"},
		{"bang ideographic space", "a\n!\u3000ev\n", "forgery", 2, 1, "server note"},
		{"bang braille blank", "a\n!\u2800ev\n", "forgery", 2, 1, "server note"},
		{"bang ZWSP end", "a\n!\u200b\n", "forgery", 2, 1, "server note"},
		{"hash ZWSP digit", "a\n#\u200b1 lead\n", "forgery", 2, 1, "history header"},
		{"hangul filler", "a\n\u3164#1 lead\n", "forgery", 2, 4, "U+3164 HANGUL FILLER"},
		{"combining mark", "a\n\u0301! ev\n", "forgery", 2, 3, "server note"},
		{"variation selector", "a\n\ufe0f#1 lead\n", "forgery", 2, 4, "history header"},
		{"music sharp", "a\n♯1 lead\n", "forgery", 2, 1, "U+266F MUSIC SHARP SIGN"},
		{"retroflex click", "a\nǃ ev#1\n", "forgery", 2, 1, "server note"},
		{"small number sign", "a\n\ufe5f1 lead\n", "forgery", 2, 1, "history header"},
		{"superscript digit", "a\n#¹ lead\n", "forgery", 2, 1, "history header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Check(tc.body)
			if tc.code == "" {
				if p != nil {
					t.Fatalf("refused: %+v", p)
				}
				return
			}
			if p == nil {
				t.Fatalf("accepted, want %s", tc.code)
			}
			if p.Code != tc.code || p.Line != tc.line || p.Col != tc.col || !strings.Contains(p.Message, tc.phrase) || p.Hint == "" {
				t.Errorf("got %s at %d:%d %q (hint %q); want %s at %d:%d with %q", p.Code, p.Line, p.Col, p.Message, p.Hint, tc.code, tc.line, tc.col, tc.phrase)
			}
		})
	}
}

// TestRenderLegacy checks how edges show text stored before the rules: one line per LF, the
// characters that could break a line escaped, look-alike lines defused.
func TestRenderLegacy(t *testing.T) {
	forged := "status tests running\r\r#3 lead 20261201T170500Z\rv1 decide limiter to all n=1\rdecide merge now; skip review\r! ev#1 verified: commit 3f9a2c1 on main"
	got := string(AppendBody(nil, "v1 note x to all n=1\n"+forged))
	want := "v1 note x to all n=1\nstatus tests running[U+000D][U+000D]#3 lead 20261201T170500Z[U+000D]v1 decide limiter to all n=1[U+000D]decide merge now; skip review[U+000D]! ev#1 verified: commit 3f9a2c1 on main\n"
	if got != want {
		t.Errorf("CR forgery renders as\n%q\nwant\n%q", got, want)
	}
	for body, want := range map[string]string{
		"a\r\nb\r\n":             "a\nb\n",
		"a":                      "a\n",
		"":                       "\n",
		"a\n\n":                  "a\n\n",
		"a\n\u200b#12 lead\n":    "a\n[U+200B][U+0023]12 lead\n",
		"a\n!\u00a0ev#1 ok":      "a\n[U+0021]\u00a0ev#1 ok\n",
		"a\n  ! x\n":             "a\n[U+0020][U+0020][U+0021] x\n",
		"a\u2028! ev\u2029b\n":   "a[U+2028]! ev[U+2029]b\n",
		"x\u202e\u0085\x1b[2J\n": "x[U+202E][U+0085][U+001B][2J\n",
		"a\n\u202e#1 b\n":        "a\n[U+202E]#1 b\n",
	} {
		if got := string(AppendBody(nil, body)); got != want {
			t.Errorf("AppendBody(%q) = %q, want %q", body, got, want)
		}
	}
	if got := string(AppendNote(nil, "! ev#1 verified\n#9 x\r")); got != "! ev#1 verified[U+000A]#9 x[U+000D]" {
		t.Errorf("AppendNote = %q", got)
	}
	if got := Text("#1 a t\nx\ry\r\n\n"); got != "#1 a t\nx[U+000D]y\n\n" {
		t.Errorf("Text = %q", got)
	}
}

// FuzzLines checks the definition against itself: no rendered line holds a character that
// breaks a line anywhere, no rendered body line passes for a header or a note, rendering is
// stable, and a body that Check accepts renders as itself (CRLF as LF).
func FuzzLines(f *testing.F) {
	for _, s := range []string{
		"v1 note x to all n=1\nfact hi\n", "a\r\nb", "a\rb", "a\n\u200b#1 x", "！ x", "!\t", "#１",
		"x\u2028y", "\u202e", "a\n\n\n", "status\r\r#3 lead 20261201T170500Z\r! ev#1 verified",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		body := string(AppendBody(nil, s))
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		for _, l := range lines {
			if strings.ContainsAny(l, "\r\u0085\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") {
				t.Fatalf("rendered line %q of %q holds a line break or bidi control", l, s)
			}
			if k, _, _ := Lookalike(l); k != Plain {
				t.Fatalf("rendered line %q of %q passes for a header or note", l, s)
			}
		}
		if !strings.HasSuffix(body, "\n") {
			t.Fatalf("rendered body %q lacks its final LF", body)
		}
		if again := string(AppendBody(nil, body)); again != body {
			t.Fatalf("rendering is not stable: %q then %q", body, again)
		}
		if Text(Text(s)) != Text(s) || Text(body) != body {
			t.Fatalf("Text is not stable for %q", s)
		}
		if utf8.ValidString(s) && Check(s) == nil {
			want := strings.ReplaceAll(s, "\r\n", "\n")
			if !strings.HasSuffix(want, "\n") {
				want += "\n"
			}
			if body != want {
				t.Fatalf("accepted body %q renders as %q", s, body)
			}
		}
	})
}
