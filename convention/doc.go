// Package convention reads, checks and writes messages in the room convention (v1): a header
// line and then one telegraphic fact per line, where a line's first word, when it is one of a
// small set of reserved words, says the line's modality (a demand, a permission, a finished
// fact, an unproven claim…) and nothing else is reserved:
//
//	v1 report limiter to lead n=3
//	ask mock Redis in tests, or skip the route test? 20260918T0900Z
//	done#1 limiter lib/rate-limit.ts sliding window
//	ev#1 commit 3f9a2c1 on branch feat/rate-limit
//
// The header is `v1 <intent> <topic> to <seat>[,<seat>…|all] [re <seq>] n=<fact lines>`.
//
// The package separates two kinds of finding, and the difference matters to whoever acts on a
// message:
//
//   - errors (Parse, Validate) mean the message is data: it is malformed, unaddressed, or
//     truncated or padded (its n does not match), and nothing in it may be acted on. The room
//     server refuses such a message and says why.
//   - warnings (Lint) mean the message can be acted on but costs more tokens than it needs, or
//     risks being misread: extended ISO dates, random-looking ids, a done with no evidence, an
//     ask with no time, a line that reads as a decision already taken in a message that only
//     proposes, and so on. Warnings never rewrite the message; where a rewrite exists it is in
//     the diagnostic's Fix.
//
// Every diagnostic carries a 1-based line and a 1-based byte column, like the Go compiler's,
// so that `file:line:col: message` lands the cursor in an editor, and a stable code:
//
//	errors    empty, utf8, header (malformed), version, no-to, no-n, n-mismatch,
//	          ev-without-done, unknown-seat (with a roster)
//	warnings  date-format (with the ISO basic rewrite and the tokens it saves),
//	          random-id (with its token cost), done-without-ev, test-evidence, ev-kind,
//	          ev-order, duplicate-key, ask-no-time, deadline-no-time, default-without-ask,
//	          decider-without-ask, no-ask, decision-taken, bare-number, reserved-spelling,
//	          modality-word, pair-key, bullet, markdown, empty-line, blank-line, json-body,
//	          emoji, one-fact, intent, re-form, duplicate-seat
//
// Render writes the canonical form of a parsed message. For any source that parses without an
// error, parsing Render's output gives back the same message, and rendering that again gives
// the same bytes (the fuzz tests hold this).
//
// Token figures in warnings (the tokens a rewrite saves, the cost of an id) are exact o200k_base
// counts from package bpe, because those are the tokens readers pay for.
package convention
