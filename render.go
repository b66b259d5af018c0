package parley

// Renderer writes an inbox and a state record as convention text, the form agents read. The
// room package's room.Renderer is the server's; the edges (http, mcp) are handed one rather
// than importing the service.
type Renderer interface {
	InboxText(*Inbox) string
	StateText(*StateRecord) string
}
