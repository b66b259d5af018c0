package a2c

// Counter counts tokens; *bpe.Encoding satisfies it. The codec uses it to keep only the
// references that save real tokens, and the accounting to count them.
type Counter interface {
	Count(s string) int
}

// Options switches the codec's mechanisms one by one. Every mechanism is reversible and
// the decoder reads any mix of them, so Options matter to the encoder only (and the
// Dictionary to both sides). The zero value writes canonical JSON lines; Default turns
// everything on that pays on real traces.
type Options struct {
	// Schema writes a record as a positional line (packed header): a one-letter kind,
	// fields in a per-kind order, fields equal to their default left empty, trailing
	// empty fields cut.
	Schema bool
	// KindNames writes every kind as a quoted name ("plan") instead of its one-letter
	// code, so the instructions need not list the codes: cheaper on short sessions.
	KindNames bool
	// NoDefaults writes a string field even where it equals its default (the same field
	// of the last record of its kind, or of the previous record), so a blank field only
	// ever means an absent one and the instructions need not explain defaults.
	NoDefaults bool
	// Adapt lets EncodeSession drop, one at a time, each mechanism whose explanation in
	// the instructions costs more than it saves in the payload of this session (it
	// needs Counter). Short sessions then ship short instructions; long ones keep every
	// mechanism. See EncodeSession.
	Adapt bool
	// Prose lets Adapt write a session as prose lines, "kind from>to call_id: text",
	// with one short sentence of instructions, when every record has that form
	// (ProseFits) and it costs fewer tokens than the schema lines (the payload header
	// then says +t).
	Prose bool
	// proseLines writes every record as a prose line (Adapt sets it; a record without
	// a prose form is then an error).
	proseLines bool
	// offStyles are embedded-JSON styles (by tag) left unused, and noCut leaves JSON
	// cut short as text: Adapt sets them when a style's words in the instructions, or
	// the cut's, cost more than it saves.
	offStyles string
	noCut     bool
	// noLetters writes every splice's length in digits (^ and ?), never as a letter
	// (.): Adapt's step for a session whose few splices do not pay for the words.
	noLetters bool
	// wholeEmbedded keeps Adapt from dropping single styles or the cut (the
	// alternative TestDefaultsWinOnTrainingSessions measures).
	wholeEmbedded bool
	// RawValues writes a string in an args, result or meta slot as ~ then raw text (as
	// the string slots write theirs: only \ and | escaped, newlines kept) where that
	// costs fewer tokens than the string quoted.
	RawValues bool
	// Bare drops the quotes around object keys and simple strings.
	Bare bool
	// RawNewlines keeps newlines of text fields as line breaks, so a record may span
	// lines; a record starts at a line that RecordStart accepts.
	RawNewlines bool
	// Embedded re-reads strings that hold JSON (tool arguments and results) and writes
	// the parsed value with a one-letter style tag, when writing it back in that style
	// gives the same bytes.
	Embedded bool
	// ValueRefs writes a repeated string as $n, the n-th distinct string of at least
	// MinValueLen bytes seen in the session.
	ValueRefs   bool
	MinValueLen int // default 6
	// Splices replaces a span of a line that occurred earlier in the session text (or
	// the dictionary) by a marker with its length and its distance, LZ-style (.xd, ^nnd,
	// ?nnnd: see doc.go).
	Splices   bool
	MinSplice int // shortest span worth a splice, in bytes; default 8 with TokenAligned, else 24
	// TokenAligned keeps a splice or a value reference only where Counter says it costs
	// fewer tokens than its literal (a splice counted with the bytes around it).
	TokenAligned bool
	// FullInstructions ships the whole format description with every session instead of
	// the parts the session uses.
	FullInstructions bool
	// Dictionary, when set, is text both sides hold before the session starts; splices
	// may point into it. Its tokens are charged in full (see DictCharge).
	Dictionary *Dictionary
	// DictCharge says how Measure charges the dictionary (see Dictionary).
	DictCharge DictCharge
	// Counter counts tokens for TokenAligned decisions; nil falls back to byte lengths.
	Counter Counter
}

// Default returns the configuration that `parley a2c encode` uses: every mechanism on
// except value references, no dictionary. Since splices cost 3 to 4 tokens, $n saves
// less than it costs to explain and breaks longer splices across the value: without it
// the full cost fell on every corpus source and the synthetic one.
func Default(c Counter) Options {
	return Options{Schema: true, Bare: true, RawNewlines: true, Embedded: true, Splices: true, TokenAligned: c != nil, Adapt: c != nil, Prose: c != nil, RawValues: true, Counter: c}
}

func (o *Options) minValueLen() int {
	if o.MinValueLen > 0 {
		return o.MinValueLen
	}
	return 6
}

// minSplice defaults to 8 bytes (the match finder's hash length) when the tokenizer
// checks every splice, and to 24 when length is the only guide (a cl100k token is about
// 4 bytes; a splice marker costs 3 to 4 tokens). 8 beat 10, 12 and 16 on every corpus
// source and the synthetic one.
func (o *Options) minSplice() int {
	if o.MinSplice > 0 {
		return o.MinSplice
	}
	if o.TokenAligned && o.Counter != nil {
		return 8
	}
	return 24
}
