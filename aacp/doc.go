// Package aacp reads, checks, writes and explains packets of the Agent Action Compression
// Protocol, version 1.1: one line of pipe-separated fields, two positional and the rest named.
//
//	FETCH|HR|return:HR-Agent|p:1|aacp:1.1|res:emp_salary|period:2024-08|fmt:json
//	└TASK └DOM └named fields, each split on its first ':'; lists are comma-joined
//
// v1.1 has no escaping: a value can hold ':' (only the first one splits) but never '|' or a
// line break, and the reference SDKs write spaces in values as '_' or '-'. A packet may be
// wrapped for display after a '|'; Parse joins such lines.
//
// # What is an error and what is a warning
//
// Validate follows section 7 of the specification. Errors (the packet must not be sent or
// acted on): TASK missing or unrecognised, DOM missing, no non-empty return:, no aacp:,
// anything that breaks the packet grammar (an empty slot, an unnamed field), and, from
// section 14, sensitive data in a value. Warnings (log, then send): an unrecognised DOM,
// a missing or odd p:, a version other than 1.1, sentiment: without tone:, ltv: without ccy:,
// and unknown field keys.
//
// Section 7 both requires a recognised TASK and asks validators to warn on unrecognised TASK
// and DOM values. This package reads the two clauses together as follows:
//
//   - An unrecognised TASK is an error. TASK is the verb the receiver acts on; a receiver that
//     does not know the verb cannot do what the packet asks, and section 14 forbids acting on a
//     packet that failed validation. A MUST outranks a SHOULD, and nothing in the
//     specification lets implementors add TASK values.
//   - An unrecognised DOM is a warning, as long as it is written like one (upper-case letters,
//     digits, '_' or '-'). Section 12 lets implementors define domains beyond the seven, so a
//     strict error would reject packets the specification allows. Options.Domains makes such
//     a domain recognised; a DOM that is empty or malformed is still an error.
//
// Diagnostic codes: errors empty, utf8, multiline, empty-field, unnamed-field, field-key,
// task, dom, return, aacp, sensitive, no-to, unknown-seat; warnings dom (unrecognised),
// priority, version, tone, ccy, unknown-field, duplicate-field, spaces, spacing,
// empty-value.
//
// Named fields in a namespace (a key containing '.', such as acme.cost_centre) are the
// organisation-private fields section 12 invites, and draw no unknown-field warning.
//
// # Rooms
//
// A packet posted into a room must name its addressees with to: (comma-separated seats, or
// all); Options.RequireTo makes a missing to: an error, and Options.Roster checks the seats.
//
// # Security
//
// Packets are untrusted input (section 14). A value that carries a credential, a private key,
// a card number or another piece of personal data is an error whose fix is a data_ptr: field,
// a reference that resolves through an authenticated data layer. Quote renders a packet's
// values as quoted data for an LLM prompt, so that text inside a value is never read as an
// instruction.
//
// Decode turns a packet into plain English for people and logs. It is advisory: the packet
// itself is the record.
package aacp
