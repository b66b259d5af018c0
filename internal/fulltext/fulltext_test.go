package fulltext

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"what did we decide about Redis?", []string{"what", "did", "we", "decide", "about", "redis"}},
		{`"redis* NEAR( -window: OR`, []string{"redis", "near", "window", "or"}},
		{"Redis redis REDIS", []string{"redis"}},
		{"opt/A rate-limit_v2 60s", []string{"opt", "a", "rate", "limit", "v2", "60s"}},
		{"Ünïcödé 日本語 x²", []string{"ünïcödé", "日本語", "x²"}},
		{"\xffredis\x00window", []string{"redis", "window"}},
		{`"*:( -'|&!`, nil},
		{"", nil},
		{"a b c d e f g h i j k l m n o p q r s", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"}},
	} {
		if got := Words(tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("Words(%q) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

func TestQueries(t *testing.T) {
	words := []string{"redis", "near", `"x" OR y`, "", "window", "a'b"}
	if got, want := FTS5(words), `"redis" OR "near" OR "window"`; got != want {
		t.Errorf("FTS5 = %s, want %s", got, want)
	}
	if got, want := TSQuery(words), `'redis' | 'near' | 'window'`; got != want {
		t.Errorf("TSQuery = %s, want %s", got, want)
	}
	if FTS5(nil) != "" || TSQuery([]string{`"`}) != "" {
		t.Error("no word must give no query")
	}
	if !Holds("opt/A Redis sliding window", []string{"redis"}) || Holds("redisson", []string{"redis"}) ||
		!Holds(strings.Repeat("x ", 40)+"tail", []string{"tail"}) {
		t.Error("Holds matches whole words only, anywhere in the text")
	}
}

var (
	fts5Query = regexp.MustCompile(`^("[^"\s]+"( OR "[^"\s]+")*)?$`)
	tsQuery   = regexp.MustCompile(`^('[^'\s]+'( \| '[^'\s]+')*)?$`)
)

// FuzzWords: whatever the query, its words are distinct lower-case runs of letters and
// numbers, at most MaxWords, and the two query languages get only quoted words joined by
// their OR, never a character of their own syntax inside a word.
func FuzzWords(f *testing.F) {
	for _, q := range []string{"redis window", `"redis* NEAR( -window: OR`, `a'b"c`, "İstanbul ǅ ß", "\xff\x00", "x\u0301y"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		words := Words(q)
		if len(words) > MaxWords {
			t.Fatalf("%d words", len(words))
		}
		seen := map[string]bool{}
		for _, w := range words {
			if w == "" || seen[w] || !utf8.ValidString(w) {
				t.Fatalf("Words(%q) holds %q", q, w)
			}
			seen[w] = true
			for _, r := range w {
				if !unicode.IsLetter(r) && !unicode.IsNumber(r) {
					t.Fatalf("Words(%q): %q holds %q", q, w, r)
				}
			}
		}
		if m := FTS5(words); !fts5Query.MatchString(m) {
			t.Fatalf("FTS5(%q) = %q", words, m)
		}
		if m := TSQuery(words); !tsQuery.MatchString(m) {
			t.Fatalf("TSQuery(%q) = %q", words, m)
		}
	})
}
