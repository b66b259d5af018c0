// Package trace turns agent traces into canonical records: one record per handoff, in a
// shape every source shares, with a canonical JSON that defines what "lossless" means
// for the a2c codec.
//
// # Records
//
// A Record has a kind (plan, message, tool_call, tool_result, status, artifact, review,
// error, final), who it is from and to, its text, the tool and call id, the call's
// arguments, the tool's result, and meta: every source field with no place of its own,
// under its source name. Nothing of a handoff is dropped; what an adapter leaves out of a
// file on purpose is listed below and in the adapter's doc.
//
// The canonical JSON of a record is an object with the members args, call_id, from,
// kind, meta, result, text, to, tool (absent when empty or nil), members sorted by the
// bytes of their names at every depth, no whitespace, numbers exactly as the source wrote
// them (Value keeps the token; nothing goes through float64), and strings with the fewest
// escapes (see AppendQuoted). A session is one trajectory: its records in order.
//
// # Adapters
//
// Load reads a file or a folder (recursively, in lexical order) with one adapter:
//
//   - toolbench: ToolBench and StableToolBench answer files (*.json). The final
//     conversation (last answer_generation.train_messages entry; else the last try's
//     chain; else the search tree's last explored branch), framed by a plan (query, tool
//     catalog, forward_args) and a status (every other field). The search tree,
//     compare_candidates and earlier train_messages prefixes are left out: they record
//     the search, not handoffs. JSON files without answer_generation are skipped.
//   - openai: JSONL (*.jsonl), one trajectory per line {"id", "messages"}; chat messages
//     map as described at chatRecords (system/user/assistant → message, assistant
//     tool_calls → one tool_call each, tool → tool_result). Other line fields go to a
//     trailing status.
//   - swe-agent: *.traj files; "history" (or "trajectory" when there is none), see
//     SWEAgent.
//   - synthetic: a seeded generator of planner/builder/reviewer sessions (Synthetic).
//
// Message fields map as: content → text (result for tool messages) when it is a
// non-empty string, otherwise meta.content keeps it exactly (null, "", parts); name of a
// tool message → tool; tool_call_id → call_id; function.name → tool;
// function.arguments → args, kept as the source string (a2c re-reads JSON inside strings
// itself, reversibly); everything else → meta.
package trace
