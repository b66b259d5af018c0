package convention

// Lint returns warnings: things that cost tokens or risk a misreading but do not stop a
// message from being acted on.
func Lint(m *Message, opt Options) []Diagnostic {
	return nil
}
