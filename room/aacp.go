package room

import (
	"strings"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/aacp"
)

// packet is what the room keeps of an AACP v1.1 packet.
type packet struct {
	verb  string   // TASK, lower-cased, as the message's intent
	topic string   // res:, the resource, as the message's topic
	to    []string // to:, the addressees (a room rule: AACP itself names only return:)
}

func looksAACP(src string) bool { return aacp.Looks(src) }

// checkAACP validates a packet by the specification (section 7, and section 14's ban on
// sensitive values) and by the room's rule that to: must name seats of the roster.
func checkAACP(src string, roster []string) (*packet, []parley.Diagnostic) {
	p, diags := aacp.Check(src, aacp.Options{RequireTo: true, Roster: roster})
	res, _ := p.Get("res")
	return &packet{verb: strings.ToLower(p.Task), topic: res, to: aacp.Addressees(p)}, diags
}

// addresseesAACP returns the to: seats of a stored packet.
func addresseesAACP(src string) []string {
	p, _ := aacp.Parse(src)
	return aacp.Addressees(p)
}
