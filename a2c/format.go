// The parts of the a2c/2 format that encoder and decoder share: the constants, the
// kind letters and slots of a schema line, where a record starts, and the decoder's error.

package a2c

import (
	"fmt"
	"strings"
)

// Format constants. They are part of a2c/2: changing one is a new format version.
const (
	// Magic starts every session payload.
	Magic = "a2c/2"
	// refMin is the shortest string (in bytes) that is numbered for $n references.
	refMin = 5
	// spliceOpen starts a splice: ^ then the length in two digits, then the distance;
	// spliceLong starts one of 100 to 999 bytes: ? then the length in three digits, then
	// the distance. spliceClose ends one only where the next byte would otherwise read as
	// part of the distance (a digit) or as the close. Either opener stands for itself
	// before anything but a digit; a literal one before a digit or before the same
	// character is written twice (^^, ??).
	spliceOpen = '^'
	spliceLong = '?'
	// spliceDot starts a splice of 1 to 52 bytes whose length is one letter (a=1 … z=26,
	// A=27 … Z=52): . then the letter, then the distance. A tokenizer reads . and a
	// letter as one token and the distance's digits in groups of three, so a splice from
	// fewer than 1,000 bytes back costs two tokens. A literal . before a letter and a
	// digit, or before », is written .» (the » dropped on reading).
	spliceDot = '.'
	// dotMax is the longest span a . splice copies.
	dotMax      = 52
	spliceClose = "»"
	// spliceMax is the longest span one splice copies (three digits).
	spliceMax = 999
)

// dotLetter returns the letter of a . splice's length n (1 ≤ n ≤ dotMax).
func dotLetter(n int) byte {
	if n <= 26 {
		return byte('a' + n - 1)
	}
	return byte('A' + n - 27)
}

// letterLen returns the length a . splice's letter stands for, 0 for a byte that is not
// an ASCII letter.
func letterLen(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 1
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 27
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// dotStarts reports whether b (after a .) reads as a . splice (a letter, then a digit) or
// as the » of an escaped literal .
func dotStarts(b []byte) bool {
	return len(b) >= 2 && ((letterLen(b[0]) > 0 && isDigit(b[1])) || (b[0] == spliceClose[0] && b[1] == spliceClose[1]))
}

// kindCodes are the one-letter kinds of a schema line.
var kindCodes = map[string]byte{
	"plan": 'p', "message": 'm', "tool_call": 'c', "tool_result": 'r', "status": 's',
	"artifact": 'a', "review": 'v', "error": 'e', "final": 'f',
}

var codeKinds = func() map[byte]string {
	m := map[byte]string{}
	for k, c := range kindCodes {
		m[c] = k
	}
	return m
}()

// Slots of a schema line. Which fields come first depends on the kind, so the fields a
// kind usually has come before the ones it rarely has and trailing empty fields vanish.
const (
	slotFrom = iota
	slotTo
	slotTool
	slotCall
	slotText
	slotArgs
	slotResult
	slotMeta
	nSlots
)

var slotNames = [nSlots]string{"from", "to", "tool", "call_id", "text", "args", "result", "meta"}

// fieldOrder is the order of the fields after the kind. One order for every kind keeps
// the decode instructions short; a per-kind order saved fewer tokens in the payload
// than it cost to explain.
var fieldOrder = []int{slotFrom, slotTo, slotTool, slotCall, slotText, slotArgs, slotResult, slotMeta}

func slotOrder(byte) []int { return fieldOrder }

func isStringSlot(s int) bool { return s <= slotText }

func isSlotName(k string) bool {
	for _, n := range slotNames {
		if n == k {
			return true
		}
	}
	return false
}

// RecordStart reports whether a payload line starts a record: a kind letter alone or
// before |, or ~, " or { first, or the a2c/2 magic (which starts the next session).
// Any other line continues the text of the record before it.
func RecordStart(line string) bool {
	if line == "" {
		return false
	}
	switch c := line[0]; {
	case c == '~' || c == '"' || c == '{':
		return true
	case codeKinds[c] != "" && (len(line) == 1 || line[1] == '|' || line[1] == '\n'):
		return true
	}
	return strings.HasPrefix(line, Magic)
}

// SyntaxError is a payload the decoder cannot read, with its line (1 = the header) and
// the byte offset in the expanded line.
type SyntaxError struct {
	Line   int
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("a2c: line %d, byte %d: %s", e.Line, e.Offset, e.Msg)
}
