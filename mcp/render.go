package mcp

import (
	"fmt"
	"strings"

	"github.com/parleyhq/parley"
)

// renderInbox is a placeholder until room.RenderInbox lands.
func renderInbox(ib *parley.Inbox) string {
	var b strings.Builder
	fmt.Fprintf(&b, "you owe: %d\n", len(ib.Unanswered))
	for _, a := range ib.Unanswered {
		fmt.Fprintf(&b, "#%d %s: %s\n", a.Seq, a.From, a.Line)
	}
	fmt.Fprintf(&b, "you wait on: %d\n", len(ib.Open))
	for _, a := range ib.Open {
		fmt.Fprintf(&b, "#%d to %s: %s\n", a.Seq, a.To, a.Line)
	}
	return b.String()
}

// renderState is a placeholder until room.RenderState lands.
func renderState(st *parley.StateRecord) string {
	return fmt.Sprintf("state %s up to #%d\n", st.Topic, st.LastSeq)
}
