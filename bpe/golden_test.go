package bpe

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/sharedtest"
)

// sharedTokvec is the developers' shared vector set, beside the repository's clone.
const sharedTokvec = "../../shared/tokvec"

type goldenCase struct {
	Encoding string `json:"encoding"`
	Text     string `json:"text"`
	IDs      []int  `json:"ids"`
}

func readCases(t testing.TB, path string) []goldenCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

func mustGet(t testing.TB, name string) *Encoding {
	t.Helper()
	e, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func checkCases(t *testing.T, path string) {
	cases := readCases(t, path)
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	for i, c := range cases {
		e := mustGet(t, c.Encoding)
		got := e.Encode(c.Text)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("%s:%d %s %q:\n got  %v\n want %v", filepath.Base(path), i+1, c.Encoding, c.Text, got, c.IDs)
			continue
		}
		if n := e.Count(c.Text); n != len(c.IDs) {
			t.Errorf("%s:%d %s %q: Count = %d, want %d", filepath.Base(path), i+1, c.Encoding, c.Text, n, len(c.IDs))
		}
		if d := string(e.Decode(got)); d != c.Text {
			t.Errorf("%s:%d %s: Decode(Encode(%q)) = %q", filepath.Base(path), i+1, c.Encoding, c.Text, d)
		}
	}
}

// TestGoldenCases checks the copy of the shared cases (see testdata/SOURCES.md).
func TestGoldenCases(t *testing.T) { checkCases(t, "testdata/cases.jsonl") }

// TestTiktokenVectors checks vectors made with OpenAI tiktoken on the edge cases where other
// implementations differ (U+0085, U+FEFF, ...); see testdata/SOURCES.md.
func TestTiktokenVectors(t *testing.T) { checkCases(t, "testdata/tiktoken.jsonl") }

// TestSharedCases checks the shared set itself, when it is beside the clone.
func TestSharedCases(t *testing.T) {
	p := filepath.Join(sharedTokvec, "cases.jsonl")
	if _, err := os.Stat(p); err != nil {
		sharedtest.Absent(t, "shared vectors absent (%v): testdata/cases.jsonl is their copy", err)
	}
	checkCases(t, p)
}

func readCorpus(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedTokvec, "corpus.txt"))
	if err != nil {
		sharedtest.Absent(t, "shared corpus absent, skipping: %v", err)
	}
	return string(b)
}

func idsHash(ids []int) string {
	var sb strings.Builder
	for i, id := range ids {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.Itoa(id))
	}
	sum := sha256.Sum256([]byte(sb.String()))
	return hex.EncodeToString(sum[:])
}

// TestCorpus encodes the shared 4 MB corpus as one string and checks the token count and the
// hash of the ids against testdata/corpus.expect.json.
func TestCorpus(t *testing.T) {
	corpus := readCorpus(t)
	raw, err := os.ReadFile("testdata/corpus.expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var expect map[string]json.RawMessage
	if err := json.Unmarshal(raw, &expect); err != nil {
		t.Fatal(err)
	}
	var fileSHA string
	json.Unmarshal(expect["file_sha256"], &fileSHA)
	if sum := sha256.Sum256([]byte(corpus)); hex.EncodeToString(sum[:]) != fileSHA {
		t.Fatalf("corpus.txt sha256 differs from corpus.expect.json")
	}
	for _, name := range Names() {
		var want struct {
			Tokens int    `json:"tokens"`
			SHA256 string `json:"sha256"`
		}
		if err := json.Unmarshal(expect[name], &want); err != nil {
			t.Fatal(err)
		}
		e := mustGet(t, name)
		ids := e.Encode(corpus)
		if len(ids) != want.Tokens {
			t.Errorf("%s: %d tokens, want %d", name, len(ids), want.Tokens)
		}
		if h := idsHash(ids); h != want.SHA256 {
			t.Errorf("%s: ids sha256 %s, want %s", name, h, want.SHA256)
		}
		if n := e.Count(corpus); n != want.Tokens {
			t.Errorf("%s: Count = %d, want %d", name, n, want.Tokens)
		}
		if string(e.Decode(ids)) != corpus {
			t.Errorf("%s: Decode(Encode(corpus)) differs", name)
		}
	}
}
