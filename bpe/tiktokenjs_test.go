package bpe

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestAgainstTiktokenJS compares Encode with OpenAI's tiktoken itself (npm tiktoken: the
// WASM build of tiktoken's Rust core and its fancy-regex pre-tokenizer) on random texts drawn
// from every Unicode plane, the classes the split patterns distinguish and real words. It
// needs node and the tiktoken package: set PARLEY_TIKTOKEN_JS to a node_modules folder that
// holds it (npm install tiktoken@1.0.22); otherwise it skips. PARLEY_TIKTOKEN_JS_N sets the
// number of texts (default 20000).
func TestAgainstTiktokenJS(t *testing.T) {
	modules := os.Getenv("PARLEY_TIKTOKEN_JS")
	if modules == "" {
		t.Skip("PARLEY_TIKTOKEN_JS (a node_modules folder with tiktoken) not set")
	}
	n := 20000
	if s := os.Getenv("PARLEY_TIKTOKEN_JS_N"); s != "" {
		json.Unmarshal([]byte(s), &n)
	}
	texts := randomTexts(n, 7)
	// A few single pieces long enough for the chunked merge (tiktoken's own merge is
	// quadratic on them, so they are few and about 20 KB).
	texts = append(texts, longWord(20000), strings.Repeat("ab", 10000), strings.Repeat("a", 20001),
		strings.Repeat("Hello", 4000), randomPiece(rand.New(rand.NewPCG(1, 1)), 20000),
		"x"+strings.Repeat("é", 10000))
	var in bytes.Buffer
	for _, s := range texts {
		b, _ := json.Marshal(map[string]string{"text": s})
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", "internal/tiktokenjs/encode.cjs")
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<26)
	checked := 0
	for sc.Scan() {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, c.Encoding).Encode(c.Text); !slices.Equal(got, c.IDs) {
			t.Errorf("%s %+q:\n got  %v\n want %v (tiktoken)", c.Encoding, c.Text, got, c.IDs)
		}
		checked++
	}
	if checked != 2*len(texts) {
		t.Fatalf("checked %d results, want %d", checked, 2*len(texts))
	}
	t.Logf("%d texts × 2 encodings agree with tiktoken", len(texts))
}

// randomTexts makes n valid UTF-8 texts mixing words, classes of characters and code points
// from everywhere in Unicode (no surrogates).
func randomTexts(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	words := []string{"the", "The", "HTTP", "Server", "it", "don", "we", "ll", "ve", "re", "s", "t", "d", "m",
		"é", "École", "ǅemal", "ʰ", "中文", "日本語", "한국어", "مرحبا", "שלום", "Ελλάδα", "ПРИВЕТ", "नमस्ते", "ไทย",
		"123", "4567", "٣٤٥", "½", "Ⅻ", "0x1F", "3.14", "1e9", "αβγ", "ΑΒΓ", "ß", "ẞ", "ﬁ", "İ", "ı", "ſ", "K"}
	seps := []string{" ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", " \n", "\u0085", "\u00a0", "\u2028", "\u3000", "\v", "\f",
		"'", "'s", "'S", "'ll", "'VE", "'ſ", "’", "/", "//", "!", "...", "-", "_", "\"", "{", "}", "(", ")", ":", ",",
		"\u200d", "\ufeff", "\ufffd", "\u0301", "\u0903", "😀", "👨‍👩‍👧", "🇫🇷", "\U000e0067", "\x00", "\x1f", "\u007f", "\u0080"}
	texts := make([]string, n)
	var sb strings.Builder
	for i := range texts {
		sb.Reset()
		for k := rng.IntN(16); k >= 0; k-- {
			switch rng.IntN(5) {
			case 0:
				sb.WriteString(words[rng.IntN(len(words))])
			case 1:
				sb.WriteString(seps[rng.IntN(len(seps))])
			case 2: // any code point, weighted towards the BMP
				var r rune
				switch rng.IntN(4) {
				case 0:
					r = rune(rng.IntN(0x3000))
				case 1:
					r = rune(rng.IntN(0x10000))
				case 2:
					r = rune(0x10000 + rng.IntN(0x30000))
				default:
					r = rune(rng.IntN(0x110000))
				}
				if utf8.ValidRune(r) {
					sb.WriteRune(r)
				}
			case 3:
				for m := rng.IntN(6); m >= 0; m-- {
					sb.WriteByte(byte('a' + rng.IntN(26)))
				}
			default:
				sb.WriteString(strings.Repeat(seps[rng.IntN(len(seps))], 1+rng.IntN(4)))
			}
		}
		texts[i] = sb.String()
	}
	return texts
}
