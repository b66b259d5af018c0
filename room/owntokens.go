package room

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley"
)

// The secret scan sees a body as a reader would copy it. Characters that render as nothing
// (Unicode format characters: zero-width space and joiners, the word joiner, the BOM, the
// soft hyphen, bidi controls; variation selectors and the other default-ignorable code
// points) are dropped, and fullwidth ASCII is read as ASCII, so that a token split by
// invisible characters or spelt in fullwidth letters is still a token. The regexp rules run
// on that folded text too, and each finding is reported at its place in the body as posted.

// maxTokenChecks bounds the store look-ups of one post: each distinct string of a seat
// token's shape costs one SeatByToken. A body with more of them than this is refused
// without looking them up: no message needs that many strings that look like credentials.
// maxWrappedChecks bounds the look-ups of the second pass, which joins the body's lines and
// words to find a token wrapped or spaced apart; that pass never refuses for the count,
// since a list of short pk_… names joins into many candidates. A post costs at most 80.
const (
	maxTokenChecks   = 64
	maxWrappedChecks = 16
)

// Kinds of the findings of the own-token check; both name no value.
const (
	kindOwnSeatToken   = "a parley seat token of this server"
	kindOwnAdminToken  = "this server's admin token"
	kindManyTokenShape = "a run of strings shaped like parley seat tokens, too many to check one by one"
	tokenBodyLen       = 43 // 32 random bytes in unpadded base64url
)

// hidden reports whether r renders as nothing: a format character (Cf), a variation selector
// or another default-ignorable code point.
func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// foldRune returns what r reads as in the folded text, and false when it is dropped; join
// drops white space too.
func foldRune(r rune, join bool) (rune, bool) {
	if r >= 0xFF01 && r <= 0xFF5E { // fullwidth ASCII
		return r - 0xFEE0, true
	}
	if join && unicode.IsSpace(r) {
		return r, false
	}
	return r, !hidden(r)
}

// foldBody returns body as the scan reads it; an ASCII body is returned as it is unless
// join asks for its white space to go.
func foldBody(body string, join bool) string {
	ascii := true
	for i := 0; i < len(body); i++ {
		if body[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii && !join {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	for _, r := range body {
		if f, ok := foldRune(r, join); ok {
			b.WriteRune(f)
		}
	}
	return b.String()
}

// bodyOffset maps a byte offset in foldBody(body, join) back to the offset in body of the
// character that produced it.
func bodyOffset(body string, folded int, join bool) int {
	n := 0
	for i, r := range body {
		f, ok := foldRune(r, join)
		if !ok {
			continue
		}
		if n >= folded {
			return i
		}
		n += utf8.RuneLen(f)
	}
	return len(body)
}

// isTokenByte reports whether c is a base64url character, as a seat token is made of.
func isTokenByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// tokenCandidates returns the offsets in s of every string of a seat token's shape: the
// prefix and 43 base64url characters, wherever it stands, whatever is glued to either side.
// A token begins with its prefix, so every occurrence of the prefix is one candidate (the
// 43 characters after it), and an occurrence inside another candidate is a candidate too.
func tokenCandidates(s string) []int {
	var offs []int
	for i := 0; ; {
		j := strings.Index(s[i:], TokenPrefix)
		if j < 0 {
			return offs
		}
		start := i + j
		end := start + len(TokenPrefix) + tokenBodyLen
		ok := end <= len(s)
		for k := start + len(TokenPrefix); ok && k < end; k++ {
			ok = isTokenByte(s[k])
		}
		if ok {
			offs = append(offs, start)
		}
		i = start + 1
	}
}

// tokenCheck looks strings of a token's shape up, each distinct one once, within a budget.
type tokenCheck struct {
	s    *Service
	seen map[string]bool
	left int
}

// first returns the kind and offset in text of the first of this server's own tokens among
// the candidates at offs: seat tokens, which the store keeps only as hashes, and an admin
// token of the same shape known only by its hash. over reports that the budget ran out first.
func (c *tokenCheck) first(ctx context.Context, text string, offs []int) (kind string, off int, over bool, err error) {
	s := c.s
	for _, off := range offs {
		cand := text[off : off+len(TokenPrefix)+tokenBodyLen]
		if c.seen[cand] {
			continue
		}
		if c.left == 0 {
			return "", -1, true, nil
		}
		c.seen[cand] = true
		c.left--
		h := sha256.Sum256([]byte(cand))
		if s.hasAdmin && subtle.ConstantTimeCompare(h[:], s.admin[:]) == 1 {
			return kindOwnAdminToken, off, false, nil
		}
		seat, err := s.store.SeatByToken(ctx, h[:])
		switch {
		case parley.ErrorCode(err) == parley.ENOTFOUND:
			continue
		case err != nil:
			return "", -1, false, s.internal(ctx, "secret scan: seat by token", err)
		}
		if subtle.ConstantTimeCompare(seat.TokenHash, h[:]) == 1 {
			return kindOwnSeatToken, off, false, nil
		}
	}
	return "", -1, false, nil
}

// checkSecrets refuses a body that carries a credential or one of this server's own tokens:
// glued to other characters, split by invisible ones, spelt in fullwidth letters, or wrapped
// across lines or spaces. The refusal names the kind and the place, never the value.
func (s *Service) checkSecrets(ctx context.Context, body, format string) error {
	folded := foldBody(body, false)
	kind, foff := firstSecret(folded, s.adminTok)
	off := foff
	if off >= 0 && folded != body {
		off = bodyOffset(body, off, false)
	}
	consider := func(k string, o int) {
		// At the same place, the own token is the more precise name.
		if o >= 0 && (off < 0 || o <= off) {
			kind, off = k, o
		}
	}
	if strings.Contains(folded, TokenPrefix) {
		c := &tokenCheck{s: s, seen: map[string]bool{}, left: maxTokenChecks}
		offs := tokenCandidates(folded)
		if foff >= 0 {
			// Only a token at or before the first finding can change the refusal.
			for n, o := range offs {
				if o > foff {
					offs = offs[:n]
					break
				}
			}
		}
		k, o, over, err := c.first(ctx, folded, offs)
		switch {
		case err != nil:
			return err
		case over:
			k, o = kindManyTokenShape, offs[0]
		}
		if o >= 0 {
			consider(k, bodyOffset(body, o, false))
		} else if off < 0 {
			// A token wrapped across lines or spaced apart: the same look-ups on the body
			// with its white space gone, for the candidates not already looked up.
			joined := foldBody(body, true)
			c.left = maxWrappedChecks
			k, o, _, err := c.first(ctx, joined, tokenCandidates(joined))
			if err != nil {
				return err
			}
			if o >= 0 {
				consider(k, bodyOffset(body, o, true))
			}
		}
	}
	// The plain admin token wrapped or spaced apart; its first or last four characters
	// stay together unless it was cut into bits, which saves joining every body.
	if a := s.adminTok; off < 0 && len(a) >= 12 && (strings.Contains(folded, a[:4]) || strings.Contains(folded, a[len(a)-4:])) {
		if i := strings.Index(foldBody(body, true), a); i >= 0 {
			consider(kindOwnAdminToken, bodyOffset(body, i, true))
		}
	}
	if off < 0 {
		return nil
	}
	line, col := position(body, off)
	return secretError(secretFinding{kind: kind, line: line, col: col}, format)
}
