package bpe

import (
	"encoding/binary"
	"errors"
	"io"
	"unsafe"
)

// Streaming. Both split patterns match forward only: the piece that starts at i depends on
// the text from i on. So text can be counted in parts cut at a position x that is a piece
// boundary whatever comes before or after, and where the text before x splits the same with
// or without what follows; then Count(s) == Count(s[:x]) + Count(s[x:]). Two kinds of
// position are such cuts (SafeCut):
//
//   - after "\n", before an ASCII character that is neither white space nor '/': no piece
//     runs from a "\n" into such a character (white space pieces stop at it, a punctuation
//     piece's trailing [\r\n]* (o200k: [\r\n/]*) too, and \n is never the one-character
//     prefix of a letter piece);
//   - after an ASCII letter, before a space: every piece holding a letter ends with its run
//     of letters (or a contraction, which starts with an apostrophe).
//
// In both cases the last piece before x ends at x whether the text goes on or not (its
// matcher stops at the space or character at x as it stops at the end of the text).
// TestSafeCut and FuzzSafeCut check the equality at every such cut.

// SafeCut returns the last position x in (0, len(b)) at which b can be cut for counting
// (see above), or 0 if there is none.
func SafeCut(b []byte) int { return safeCutFrom(b, 1) }

// safeCutFrom is SafeCut looking only at positions from on. It reads eight positions at a
// time where it can: x-7..x hold no cut unless b[x-7:x+1] holds a space or b[x-8:x] a newline,
// so a long stretch without either (one line of no spaces: letters, digits, CJK) costs about
// a tenth of the byte by byte loop.
func safeCutFrom(b []byte, from int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	lo := max(from, 1)
	x := len(b) - 1
	for ; x-7 >= lo; x -= 8 {
		sp := binary.LittleEndian.Uint64(b[x-7:]) ^ ' '*ones
		nl := binary.LittleEndian.Uint64(b[x-8:]) ^ '\n'*ones
		if (sp-ones)&^sp&highs == 0 && (nl-ones)&^nl&highs == 0 {
			continue // no zero byte: no space, no newline
		}
		for y := x; y > x-8; y-- {
			if isSafeCut(b, y) {
				return y
			}
		}
	}
	for ; x >= lo; x-- {
		if isSafeCut(b, x) {
			return x
		}
	}
	return 0
}

// isSafeCut reports whether b can be cut at x, 0 < x < len(b) (see above).
func isSafeCut(b []byte, x int) bool {
	c, prev := b[x], b[x-1]
	return prev == '\n' && c > ' ' && c < 0x7F && c != '/' || c == ' ' && (prev|0x20)-'a' < 26
}

// streamBuffer is the size of the reads of CountReader.
const streamBuffer = 1 << 20

// CountReader returns the number of tokens of everything r yields, and its length in bytes,
// holding about a megabyte at a time: the text is counted in parts cut at safe positions
// (SafeCut), which gives the count of the whole. A stretch with no safe position (one very
// long line of no spaces, a run of white space) is held whole.
func (e *Encoding) CountReader(r io.Reader) (tokens int, size int64, err error) {
	buf := make([]byte, 0, streamBuffer)
	from := 0 // no safe cut in buf before from
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow: no safe cut in a full buffer
		}
		n, rerr := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		size += int64(n)
		eof := errors.Is(rerr, io.EOF)
		if rerr != nil && !eof {
			return tokens, size, rerr
		}
		if eof {
			if len(buf) > 0 {
				tokens += e.Count(unsafe.String(&buf[0], len(buf)))
			}
			return tokens, size, nil
		}
		// Count up to the last safe cut once the buffer is at least half full.
		if len(buf) < cap(buf)/2 {
			continue
		}
		if x := safeCutFrom(buf, from); x > 0 {
			tokens += e.Count(unsafe.String(&buf[0], x))
			buf = buf[:copy(buf, buf[x:])]
		}
		from = len(buf)
	}
}
