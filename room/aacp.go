package room

import (
	"strconv"
	"strings"

	"github.com/parleyhq/parley/convention"
)

// packet is what the room needs from an AACP v1.1 packet.
type packet struct {
	verb  string   // field 0, TASK, lower-cased as the message's intent
	topic string   // res:, the resource, as the message's topic
	to    []string // to:, the addressees (a room rule: AACP itself only names return:)
}

// looksAACP reports whether src starts like an AACP packet: an upper-case TASK, a pipe, an
// upper-case DOM, a pipe.
func looksAACP(src string) bool {
	src = strings.TrimLeft(src, " \t\r\n")
	task, rest, ok := strings.Cut(src, "|")
	if !ok || !upperWord(task) {
		return false
	}
	dom, _, ok := strings.Cut(rest, "|")
	return ok && upperWord(dom)
}

func upperWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c == '_' || c == '-' || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// checkAACP validates a packet by the spec's MUST rules (TASK and DOM present, every other
// field key:value, a non-empty return:, an aacp: version) and the room's own: a to: naming the
// addressees. A packet may be wrapped over several lines; the lines are joined.
func checkAACP(src string) (*packet, []convention.Diagnostic) {
	var diags []convention.Diagnostic
	fail := func(msg, fix string) {
		diags = append(diags, convention.Diagnostic{Line: 1, Col: 1, Severity: convention.SeverityError, Code: "aacp", Message: msg, Fix: fix})
	}
	var joined strings.Builder
	for _, l := range strings.Split(src, "\n") {
		joined.WriteString(strings.TrimSpace(l))
	}
	fields := strings.Split(strings.TrimSuffix(joined.String(), "|"), "|")
	pk := &packet{verb: strings.ToLower(fields[0])}
	named := map[string]string{}
	for i, f := range fields[2:] {
		k, v, ok := strings.Cut(f, ":")
		if !ok || k == "" {
			fail("AACP field "+strconv.Itoa(i+3)+" ("+shortText(f)+") is not key:value", "write every field after TASK|DOM as key:value")
			continue
		}
		if _, dup := named[k]; !dup {
			named[k] = v
		}
	}
	if strings.TrimSpace(named["return"]) == "" {
		fail("the packet has no return: field", "add return:<your seat>")
	}
	if _, ok := named["aacp"]; !ok {
		fail("the packet has no aacp: version field", "add aacp:1.1")
	}
	to := strings.TrimSpace(named["to"])
	if to == "" {
		fail("the packet does not name its addressee: in this room an AACP packet needs to:<seat>", "add to:<seat> (several as to:a,b, or to:all)")
	}
	for _, s := range strings.FieldsFunc(to, func(r rune) bool { return r == ',' || r == '+' }) {
		pk.to = append(pk.to, s)
	}
	pk.topic = named["res"]
	return pk, diags
}

func shortText(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}
