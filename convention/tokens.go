package convention

// TokenEncoding is the encoding the token figures of Lint are meant in: the one the study
// measured, and the one most agents in a room are billed by. Pass a counter of it in
// Options.Counter (the bpe package's o200k_base encoding is one).
const TokenEncoding = "o200k_base"

// Counter counts the tokens of a text. The package takes one rather than importing a
// tokenizer, so that parsing a message does not link megabytes of vocabularies; *bpe.Encoding
// satisfies it.
type Counter interface {
	Count(s string) int
}

// roughCounter is the counter Lint uses when Options.Counter is nil: about four bytes a
// token, which is close for English prose and code and never zero for a nonempty text.
type roughCounter struct{}

func (roughCounter) Count(s string) int { return (len(s) + 3) / 4 }
