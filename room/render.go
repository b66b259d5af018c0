package room

import "github.com/parleyhq/parley"

// Renderer is the parley.Renderer that writes inboxes and state records with RenderInbox and
// RenderState; pass it to the edges (http.WithRenderer, mcp.WithRenderer).
type Renderer struct{}

var _ parley.Renderer = Renderer{}

// InboxText is RenderInbox(in).
func (Renderer) InboxText(in *parley.Inbox) string { return RenderInbox(in) }

// StateText is RenderState(r).
func (Renderer) StateText(r *parley.StateRecord) string { return RenderState(r) }
