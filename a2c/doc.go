// Package a2c is a lossless codec for machine handoffs (plans, messages, tool calls and
// results, reviews) that charges itself for its own decode overhead.
//
// A session is the ordered records of one trajectory (package trace). The encoder turns
// each record, one handoff at a time, into a2c/2 text; a record may refer back to
// anything earlier in its session. The decoder rebuilds every record so that its
// canonical JSON (trace.AppendCanonical) is byte-identical to the original's; a
// configuration that misses on a single record cannot win a benchmark. The payload is
// ordinary printable UTF-8 text, counted with real tokenizers, and shipped with decode
// instructions that describe only the features the session used. Full cost = payload +
// instructions + dictionary; it is the only headline number (Measure).
//
// # The a2c/2 format
//
// A payload is a header line and one record per line; a record's text fields may keep
// their newlines, so a record may continue over several lines:
//
//	a2c/2[+t][+d<check>][ <id>]                      header; +t: prose lines; +d: the dictionary is used
//	<kind>|<from>|<to>|<tool>|<call_id>|<text>|<args>|<result>|<meta>[|<other keys>]
//	<kind>|…                                         next record (empty fields at the end cut)
//	 …text that kept its newline…                    continuation: not a record start
//
//	 kind   p plan  m message  c tool_call  r tool_result  s status  a artifact
//	        v review  e error  f final; "…" any other kind; ~ no kind
//	 ┌──────────── string fields: raw text ───────────┐ ┌────── value fields ──────┐
//	 from    to    tool    call_id    text              args    result    meta
//	 empty = default: from/to as in the last record of   empty = absent;
//	 the same kind, tool/call_id as in the previous      ~ then raw text (up to the
//	 record, text absent; ~ = absent                     next |): a string
//
// The header names the dictionary a payload uses by its check value (Dictionary.Check):
// six decimal digits after +d, taken from the SHA-256 of the dictionary's text. A decoder
// refuses the payload (DictionaryError) when it is given no dictionary or one with another
// check value, instead of copying the wrong bytes. The digits cost two tokens in each
// payload that uses a dictionary, and are charged as part of its header; payloads without
// a dictionary carry none. A bare +d (payloads written before check values) is decoded
// with the dictionary given, unchecked. The dictionary file that --dict reads holds the
// text and one final newline (ReadDictionary, Dictionary.WriteTo).
//
// A line is decoded in two layers.
//
// Layer 2, splices. Before anything else, each splice is replaced by n bytes that start d
// bytes before it in the session text (the decoded lines so far, each followed by a
// newline, preceded by the dictionary and a newline when there is one). Three forms:
// .xd, where the letter x is n (a-z = 1-26, A-Z = 27-52); ^nnd, n in two digits; ?nnnd, n
// in three digits (100 to 999); d is the digits after the length. The copy runs byte by
// byte, so it may overlap what it produces (LZ77). A » right after the digits ends the
// splice and is dropped; the encoder writes it only when the next byte is a digit or ».
// Longer spans take several splices. ^ and ? stand for themselves before anything but a
// digit; a literal one before a digit or before the same character is written twice (^^,
// ??). A . stands for itself unless a letter and a digit, or », follow it; a literal .
// there is written .» (the » dropped). The first two bytes of a record are never spliced:
// they mark where a record starts. The encoder keeps a splice only where it is worth it:
// with TokenAligned, the real tokenizer must count fewer tokens for the marker than for
// the literal, a few bytes either side included. (cl100k and o200k read digits in groups
// of three and . with a letter as one token: .k512 is 2 tokens, ^11512 3, the a2c/1 form
// «11512 3 to 4 where the punctuation before it did not merge with «.)
//
// The dictionary ships packed (Dictionary.Packed): its text written as a line before the
// session's first, with splices into itself by the same rules (UnpackDictionary), so
// "spliced dictionary first" in the instructions.
//
// The originals. A splice may reach back beyond the start of the session text into the
// originals, which come just before it: the text of every outermost %X string of the
// earlier lines (see Embedded JSON), in order, each written as a raw string field writes
// it (backslash escapes, newlines kept) and followed by a newline. A splice may run from
// the originals on into the session text. So a message that quotes a tool's JSON result
// verbatim copies it although the payload held the result as parsed %X. The encoder uses
// them only once a first splice into them saves more tokens than the sentence that
// explains them.
//
// Layer 1, the record. Fields are split by |. String fields (from, to, tool, call_id,
// text) are raw text with backslash escapes (\\ \| \n \r \t \b \f \uXXXX, and \~ \$ \%
// \" for a first character that would otherwise mean something); a raw newline is a
// newline, except that one followed by what looks like a record start (RecordStart) is
// written \n. A string field may instead hold "…" (a quoted string), $k or %X (below).
// Value fields hold one value in a compact JSON: numbers exactly as in the source,
// true/false/null, [..], {key:value,..}; keys and strings go without quotes when that is
// unambiguous (no , : | { } [ ] " \ or control character, no leading digit, -, $, %, ~
// or ', not a keyword, no space at either end), otherwise between " or ' (whichever
// needs fewer escapes). Object members keep their order. Members that have no slot
// (unknown names, wrong types, repeated names) go, in order, in a last object field.
// Records written without the schema are one such object on a line, starting with {.
//
// Raw values: in a value field, ~ followed by raw text (escaped as the string fields
// escape theirs) is a string (Options.RawValues); the encoder writes it so only where it
// costs fewer tokens than the string quoted.
//
// Prose lines (header +t, Options.Prose): every record is one line, "kind from>to
// call_id: text", for sessions whose every record is {kind, from, to?, text} or a tool
// call ({kind: tool_call, from, to, tool = to, call_id, args}: the text is args) or a
// tool result ({kind: tool_result, from, to, tool = from, call_id, result}: the text is
// result), all strings, with no control character and kind, from, to and call_id free of
// space, >, :, \, ^ and ?. The call_id is written for tool records only; to is left out
// (with its >) when the record has none. Splices apply as on any line. Adapt writes a
// session so when that costs fewer tokens than its schema lines: the instructions are
// then one sentence (about 30 tokens) instead of a field list, letters and defaults.
//
// Value references: $k is the k-th distinct string (counting from 0) of at least 5
// bytes decoded so far in the session, keys excluded. (Default leaves them off: with
// 3-token splices they cost more than they save.)
//
// Embedded JSON: %X followed by an object or array is a string that holds that JSON
// written in style X (j compact, a compact ASCII, p Python json.dumps, u json.dumps
// UTF-8, m/n compact with ", " between array items, z/y indent 0, i/k indent 2, I/K
// indent 4, P Python repr; ASCII styles write non-ASCII as \uXXXX). The encoder uses it only when
// writing the parsed value back in that style gives the original bytes.
//
// Every mechanism can be switched off (Options); the decoder reads any mix. The
// instructions (Instructions) are built per session from what it used (naming only the
// fields up to the last one any line fills), and are charged in full with the first
// handoff when Measure computes break-even. With Options.Adapt (on in Default) a short
// session whose instructions are a large share of its cost drops, one by one, what
// costs more to explain than it saves: embedded JSON, kind letters (kinds are then
// written as quoted names), defaults (fields are then written even when equal to their
// default), raw values, value references, splices, bare strings, the schema itself; and
// a session whose records all have a prose form is also tried as prose lines.
//
// Every token figure counts the text as shipped: the payload is Payload() (each line with
// its newline), the instructions and the dictionary their own text; Ship returns the
// three with their counts, as `parley a2c encode --json` prints them.
package a2c
