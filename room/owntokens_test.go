package room_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/sqlitetest"
	"github.com/parleyhq/parley/room"
	"github.com/parleyhq/parley/sqlite"
)

// leaks reports whether msg shows any 12 characters of tok.
func leaks(msg, tok string) bool {
	for i := 0; i+12 <= len(tok); i++ {
		if strings.Contains(msg, tok[i:i+12]) {
			return true
		}
	}
	return false
}

// fullwidth spells the ASCII of s in fullwidth letters.
func fullwidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0x20 && r < 0x7f {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestOwnTokensDisguised posts the server's own seat tokens glued to other characters, split
// by invisible format characters and spelt in fullwidth letters: every one is refused as
// this server's token, at its place in the body, without the token in the refusal.
func TestOwnTokensDisguised(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", &parley.Policy{SeatBurst: 1000}, "a", "b") // refusals count against the cap
	tok := f.Toks["r/b"]
	mid := len(tok) / 2
	cases := map[string]string{
		"glued before":           "x" + tok,
		"glued after":            tok + "y",
		"glued both":             "id=" + tok + "&z",
		"prefix doubled":         "pk_" + tok,
		"zero-width space":       tok[:mid] + "\u200b" + tok[mid:],
		"zero-width joiner":      tok[:5] + "\u200d" + tok[5:],
		"word joiner each char":  strings.Join(strings.Split(tok, ""), "\u2060"),
		"soft hyphen":            tok[:10] + "\u00ad" + tok[10:],
		"byte order mark":        "\ufeff" + tok[:3] + "\ufeff" + tok[3:],
		"variation selector":     tok[:20] + "\ufe0f" + tok[20:],
		"fullwidth":              fullwidth(tok),
		"glued and split":        "key:" + tok[:mid] + "\u200c" + tok[mid:] + "suffix",
		"inside another word":    "abc" + tok + "def",
		"after a format char":    "\u200b" + tok,
		"two tokens, second own": "pk_" + strings.Repeat("Q", 43) + "x" + tok,
		"spaced apart":           tok[:8] + " " + tok[8:16] + " " + tok[16:30] + "  " + tok[30:],
		"split by a tab":         tok[:25] + "\t" + tok[25:],
		"ideographic space":      tok[:12] + "\u3000" + tok[12:],
	}
	for name, hidden := range cases {
		t.Run(name, func(t *testing.T) {
			body := "v1 note t to all n=1\nfact the key is " + hidden + "\n"
			_, err := f.Post("r/a", body, "")
			if code(t, err) != parley.EINVALID {
				t.Fatalf("posted: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "a parley seat token of this server") {
				t.Errorf("refusal does not name this server's seat token: %s", msg)
			}
			if leaks(msg, tok) || leaks(fmt.Sprint(field(err, "diagnostics")), tok) {
				t.Errorf("refusal shows the token: %s", msg)
			}
			// The place is in the body as posted: line 2, at the first character of the
			// disguised token.
			start := strings.Index(hidden, tok[:8])
			if start < 0 {
				start = strings.Index(hidden, "p") // split within its first 8 characters
			}
			if name == "fullwidth" {
				start = 0
			}
			want := strings.Index(body, hidden) + start - strings.Index(body, "\n")
			if !strings.Contains(msg, fmt.Sprintf("line 2, column %d:", want)) {
				t.Errorf("refusal at the wrong place (want column %d): %s", want, msg)
			}
			ds, err := f.Svc.Lint(t.Context(), f.Seats["r/a"], "r", []byte(body))
			if err != nil || len(ds) != 1 || !strings.Contains(ds[0].Message, "of this server") {
				t.Errorf("lint: %v %+v", err, ds)
			}
		})
	}
	if h := f.History("r/a", 0); strings.Contains(h, "fact the key") {
		t.Errorf("a disguised token was stored:\n%s", h)
	}
}

// TestForeignTokenShapeGluedPasses: a glued string of a token's shape that is no token of
// this server is not a secret the server can know about; the look-up lets it through.
func TestForeignTokenShapeGluedPasses(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	f.MustPost("r/a", "v1 note t to all n=1\nfact id x"+"pk_"+strings.Repeat("Zq", 21)+"Z"+"y is a fixture\n")
}

// TestManyShortNamesPass: a list of many short pk_… names, which joins into many strings of
// a token's shape once white space is dropped, is not refused for their number.
func TestManyShortNamesPass(t *testing.T) {
	f := MustFixture(t, "")
	f.MustRoom("r", nil, "a", "b")
	var lines []string
	for i := range 80 {
		lines = append(lines, fmt.Sprintf("fact pk_table_%02d_primary_key", i))
	}
	f.MustPost("r/a", fmt.Sprintf("v1 note schema to all n=%d\n%s\n", len(lines), strings.Join(lines, "\n")))
}

// countingStore counts the store's token look-ups.
type countingStore struct {
	*sqlite.Store
	lookups atomic.Int64
}

func (c *countingStore) SeatByToken(ctx context.Context, h []byte) (*parley.Seat, error) {
	c.lookups.Add(1)
	return c.Store.SeatByToken(ctx, h)
}

// TestOwnTokensBoundedAndAdminHash checks that a post full of token-shaped strings costs at
// most a bounded number of look-ups (and is refused), and that an admin token the server
// knows only by its hash is recognised glued and split like a seat token.
func TestOwnTokensBoundedAndAdminHash(t *testing.T) {
	st := sqlitetest.Open(t)
	cs := &countingStore{Store: st}
	adminTok := room.TokenPrefix + base64.RawURLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	sum := sha256.Sum256([]byte(adminTok))
	svc, err := room.New(cs, room.Config{AdminHash: sum[:], Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := svc.Authenticate(t.Context(), adminTok)
	if err != nil || !admin.Admin {
		t.Fatalf("the admin known by hash does not authenticate: %v", err)
	}
	p := parley.DefaultPolicy()
	p.MaxMessageBytes = 1 << 20
	if _, err := svc.CreateRoom(t.Context(), admin, "r", &p); err != nil {
		t.Fatal(err)
	}
	_, tok, err := svc.AddSeat(t.Context(), admin, "r", "a", parley.RoleAgent)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := svc.Authenticate(t.Context(), tok)

	body := "v1 note t to all n=1\nfact admin x" + adminTok[:9] + "\u200b" + adminTok[9:] + "y\n"
	_, err = svc.Post(t.Context(), a, "r", []byte(body), "")
	if err == nil || !strings.Contains(err.Error(), "this server's admin token") || leaks(err.Error(), adminTok) {
		t.Fatalf("admin token known by hash: %v", err)
	}

	var b strings.Builder
	for i := range 300 {
		fmt.Fprintf(&b, "x%s%042dzz ", room.TokenPrefix, i)
		b.WriteString("abc ")
	}
	cs.lookups.Store(0)
	body = "v1 note t to all n=1\nfact ids " + b.String() + "\n"
	_, err = svc.Post(t.Context(), a, "r", []byte(body), "")
	if err == nil || !strings.Contains(err.Error(), "too many to check") {
		t.Fatalf("300 token-shaped strings: %v", err)
	}
	if n := cs.lookups.Load(); n > 64 {
		t.Errorf("%d look-ups for one post; the bound is 64", n)
	}
}
