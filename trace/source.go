package trace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Adapters names the adapters Load understands.
var Adapters = []string{"toolbench", "openai", "swe-agent", "synthetic", "synthetic-react"}

// LoadOptions tunes Load. The zero value reads real sources; Synthetic* apply to the
// synthetic adapter only.
type LoadOptions struct {
	SyntheticSeed     int64 // seed of the generator (0 is a valid seed)
	SyntheticSessions int   // sessions to generate; 0 means 40
	// Progress, when set, is called once per file read.
	Progress func(path string)
	// Skip, when set, is told about each file that cannot be read or parsed, and Load
	// goes on without it; when nil, the first such error ends Load.
	Skip func(path string, err error)
}

// Load reads every session of a source with the named adapter. path may be a file or a
// folder, read recursively in lexical order; files the adapter does not read (licences,
// READMEs) are skipped by extension. Session IDs are paths relative to the folder (with
// "/" separators), plus the line's id for JSONL.
func Load(ctx context.Context, adapter, path string, opt LoadOptions) ([]Session, error) {
	if adapter == "synthetic" {
		n := opt.SyntheticSessions
		if n <= 0 {
			n = 40
		}
		return Synthetic(opt.SyntheticSeed, n), nil
	}
	if adapter == "synthetic-react" {
		n := opt.SyntheticSessions
		if n <= 0 {
			n = 40
		}
		return SyntheticReAct(opt.SyntheticSeed, n), nil
	}
	var skipLine func(rel string, line int, err error)
	if opt.Skip != nil {
		skipLine = func(rel string, line int, err error) {
			opt.Skip(fmt.Sprintf("%s:%d", filepath.Join(path, rel), line), err)
		}
	}
	ext, read, err := adapterReader(adapter, skipLine)
	if err != nil {
		return nil, err
	}
	files, root, err := listFiles(path, ext)
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			opt.Progress(f)
		}
		data, err := os.ReadFile(f)
		if err != nil {
			if opt.Skip != nil {
				opt.Skip(f, err)
				continue
			}
			return nil, err
		}
		rel, err := filepath.Rel(root, f)
		if err != nil || rel == "." {
			rel = filepath.Base(f)
		}
		ss, err := read(filepath.ToSlash(rel), data)
		if err != nil {
			if opt.Skip != nil {
				opt.Skip(f, err)
				continue
			}
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, ss...)
	}
	return out, nil
}

// adapterReader returns the file extensions an adapter reads and how it reads one file.
// skipLine, when set, lets the openai adapter leave out a line that does not parse.
func adapterReader(adapter string, skipLine func(rel string, line int, err error)) ([]string, func(rel string, data []byte) ([]Session, error), error) {
	switch adapter {
	case "toolbench":
		return []string{".json"}, func(rel string, data []byte) ([]Session, error) {
			s, ok, err := ToolBench(rel, data)
			if err != nil || !ok {
				return nil, err
			}
			return []Session{s}, nil
		}, nil
	case "openai":
		return []string{".jsonl"}, func(rel string, data []byte) ([]Session, error) {
			var skip func(int, error)
			if skipLine != nil {
				skip = func(line int, err error) { skipLine(rel, line, err) }
			}
			return openAILines(rel, data, skip)
		}, nil
	case "swe-agent":
		return []string{".traj"}, func(rel string, data []byte) ([]Session, error) {
			s, err := SWEAgent(rel, data)
			if err != nil {
				return nil, err
			}
			return []Session{s}, nil
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown adapter %q (known: %s)", adapter, strings.Join(Adapters, ", "))
}

// Parse reads the sessions of one file's bytes with the named file adapter (toolbench,
// openai or swe-agent), as Load reads each file of a source; rel is the file's name, which
// the session IDs start from. A JSON file that is not a ToolBench answer file gives no
// session and no error, as in Load; an openai line that does not parse is an error.
func Parse(adapter, rel string, data []byte) ([]Session, error) {
	if adapter == "synthetic" {
		return nil, fmt.Errorf("the synthetic adapter reads no file")
	}
	_, read, err := adapterReader(adapter, nil)
	if err != nil {
		return nil, err
	}
	return read(rel, data)
}

// Detect names the file adapter that reads data: "swe-agent" for a JSON object with a
// "history" or "trajectory" array, "toolbench" for one with an "answer_generation"
// object, "openai" for JSON lines whose first holds a "messages" array. ok is false when
// none fits.
func Detect(data []byte) (adapter string, ok bool) {
	b := bytes.TrimSpace(data)
	if v, err := ParseJSON(b); err == nil && v.Kind == Object {
		if ag, ok := v.Get("answer_generation"); ok && ag.Kind == Object {
			return "toolbench", true
		}
		for _, k := range []string{"history", "trajectory"} {
			if h, ok := v.Get(k); ok && h.Kind == Array {
				return "swe-agent", true
			}
		}
	}
	first := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		first = bytes.TrimSpace(b[:i])
	}
	if v, err := ParseJSON(first); err == nil && v.Kind == Object {
		if m, ok := v.Get("messages"); ok && m.Kind == Array {
			return "openai", true
		}
	}
	return "", false
}

// listFiles returns the files under path with one of the extensions, sorted, and the
// folder IDs are made relative to.
func listFiles(path string, ext []string) ([]string, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.IsDir() {
		return []string{path}, filepath.Dir(path), nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		for _, e := range ext {
			if strings.HasSuffix(p, e) {
				files = append(files, p)
				break
			}
		}
		return nil
	})
	sort.Strings(files)
	return files, path, err
}

// OpenAI reads JSONL with one trajectory per line: {"id":…, "messages":[chat messages]}.
// Blank lines are skipped; a line without an id gets "<file>:<line>".
func OpenAI(rel string, data []byte) ([]Session, error) { return openAILines(rel, data, nil) }

// openAILines is OpenAI; with skip set, a line that does not parse is reported and left
// out instead of failing the file.
func openAILines(rel string, data []byte, skip func(line int, err error)) ([]Session, error) {
	var out []Session
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v, err := ParseJSON(b)
		var s Session
		if err == nil {
			s, err = openAISession(&v, fmt.Sprintf("%s:%d", rel, line))
		}
		if err != nil {
			if skip != nil {
				skip(line, err)
				continue
			}
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func openAISession(v *Value, fallbackID string) (Session, error) {
	s := Session{ID: fallbackID}
	if v.Kind != Object {
		return s, fmt.Errorf("a trajectory line must be a JSON object")
	}
	var trailer metaBuilder
	var msgs *Value
	for i := range v.Members {
		m := &v.Members[i]
		switch {
		case m.Key == "id" && m.Value.Kind == String:
			s.ID = m.Value.Str
		case m.Key == "messages" && m.Value.Kind == Array && msgs == nil:
			msgs = &m.Value
		default:
			trailer.add(m.Key, m.Value)
		}
	}
	if msgs == nil {
		return s, fmt.Errorf("no \"messages\" array")
	}
	for i := range msgs.Items {
		s.Records = append(s.Records, chatRecords(&msgs.Items[i], "tool_calls")...)
	}
	if t := trailer.value(); t != nil {
		s.Records = append(s.Records, Record{Kind: KindStatus, From: "source", Meta: t})
	}
	return s, nil
}

// chatRecords maps one chat message (OpenAI style, also ToolBench's and SWE-agent's
// variants) to records:
//
//   - role system, user, assistant without calls: message from the role; assistant
//     messages go to "user", the others to "assistant".
//   - role tool / function: tool_result from "tool" to "assistant"; tool = name,
//     call_id = tool_call_id, result = content.
//   - assistant with tool_calls: one tool_call per call (tool = function.name, args =
//     function.arguments as the source string, call_id = id); the message's own text and
//     other fields ride on the first, later calls carry meta.call_index. A function_call
//     named Finish (ToolBench) is a final record.
//
// content goes to text when it is a non-empty string (to result for tools); any other
// content (null, "", a parts array) is kept as meta.content, as is every other field.
func chatRecords(msg *Value, callsKey string) []Record {
	if msg.Kind != Object {
		return []Record{{Kind: KindMessage, Meta: &Value{Kind: Object, Members: []Member{{Key: "message", Value: *msg}}}}}
	}
	role := ""
	if r, ok := msg.Get("role"); ok && r.Kind == String {
		role = r.Str
	}
	var meta metaBuilder
	rec := Record{Kind: KindMessage, From: role}
	var content *Value
	var calls *Value
	var fcall *Value
	for i := range msg.Members {
		m := &msg.Members[i]
		switch {
		case m.Key == "role" && m.Value.Kind == String && m.Value.Str == role:
		case m.Key == "content" && content == nil:
			content = &m.Value
		case m.Key == callsKey && m.Value.Kind == Array && len(m.Value.Items) > 0 && calls == nil && role == "assistant":
			calls = &m.Value
		case m.Key == "function_call" && m.Value.Kind == Object && fcall == nil && role == "assistant":
			fcall = &m.Value
		case (m.Key == "name") && m.Value.Kind == String && (role == "tool" || role == "function") && rec.Tool == "":
			rec.Tool = m.Value.Str
		case m.Key == "tool_call_id" && m.Value.Kind == String && rec.CallID == "":
			rec.CallID = m.Value.Str
		default:
			meta.add(m.Key, m.Value)
		}
	}
	isTool := role == "tool" || role == "function"
	if content != nil {
		if content.Kind == String && content.Str != "" {
			if isTool {
				c := *content
				rec.Result = &c
			} else {
				rec.Text = content.Str
			}
		} else {
			// Keep the exact source shape (null, "", parts) where it cannot be text.
			meta.members(func(ms []Member) []Member { return append([]Member{{Key: "content", Value: *content}}, ms...) })
		}
	} else if role != "" {
		meta.members(func(ms []Member) []Member {
			return append([]Member{{Key: "content_absent", Value: BoolValue(true)}}, ms...)
		})
	}
	switch {
	case isTool:
		rec.Kind, rec.From, rec.To = KindToolResult, "tool", "assistant"
		if role == "function" {
			rec.From = "function"
		}
	case role == "assistant":
		rec.To = "user"
	default:
		rec.To = "assistant"
	}
	rec.Meta = meta.value()
	if fcall != nil {
		rec.Kind, rec.To = KindToolCall, "tool"
		var rest metaBuilder
		for i := range fcall.Members {
			m := &fcall.Members[i]
			switch {
			case m.Key == "name" && m.Value.Kind == String && rec.Tool == "":
				rec.Tool = m.Value.Str
			case m.Key == "arguments" && rec.Args == nil:
				a := m.Value
				rec.Args = &a
			default:
				rest.add(m.Key, m.Value)
			}
		}
		if r := rest.value(); r != nil {
			rec.Meta = withMember(rec.Meta, "function_call", *r)
		}
		if rec.Tool == "Finish" {
			rec.Kind = KindFinal
		}
		return []Record{rec}
	}
	if calls == nil {
		return []Record{rec}
	}
	out := make([]Record, 0, len(calls.Items))
	for i := range calls.Items {
		r := Record{Kind: KindToolCall, From: role, To: "tool"}
		if i == 0 {
			r.Text, r.Meta = rec.Text, rec.Meta
		}
		call := &calls.Items[i]
		var rest metaBuilder
		if call.Kind != Object {
			rest.add("call", *call)
		}
		for j := range call.Members {
			m := &call.Members[j]
			switch {
			case m.Key == "id" && m.Value.Kind == String && r.CallID == "":
				r.CallID = m.Value.Str
			case m.Key == "function" && m.Value.Kind == Object:
				var fr metaBuilder
				for k := range m.Value.Members {
					f := &m.Value.Members[k]
					switch {
					case f.Key == "name" && f.Value.Kind == String && r.Tool == "":
						r.Tool = f.Value.Str
					case f.Key == "arguments" && r.Args == nil:
						a := f.Value
						r.Args = &a
					default:
						fr.add(f.Key, f.Value)
					}
				}
				if x := fr.value(); x != nil {
					rest.add("function", *x)
				}
			default:
				rest.add(m.Key, m.Value)
			}
		}
		if i > 0 {
			rest.add("call_index", NumberValue(fmt.Sprint(i)))
		}
		if x := rest.value(); x != nil {
			r.Meta = withMember(r.Meta, "call", *x)
		}
		out = append(out, r)
	}
	return out
}

func (m *metaBuilder) members(f func([]Member) []Member) {
	if m.v.Kind != Object {
		m.v = Value{Kind: Object}
	}
	m.v.Members = f(m.v.Members)
}

// withMember returns meta (or a new object) with one more member.
func withMember(meta *Value, key string, v Value) *Value {
	out := Value{Kind: Object}
	if meta != nil {
		out.Members = append(out.Members, meta.Members...)
	}
	out.Members = append(out.Members, Member{Key: key, Value: v})
	return &out
}
