// JSON rules: JSON inside a message, and what the same facts cost as fact lines.

package convention

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/internal/lazyre"
)

// json warns on JSON inside a message, with what it costs against fact lines.
func (l *linter) json() {
	first := Line{}
	for _, ln := range l.m.Lines {
		t := strings.TrimSpace(ln.Raw)
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || strings.HasPrefix(t, `"`) && jsonPairRe.MatchString(t) {
			first = ln
			break
		}
	}
	if first.Num == 0 {
		return
	}
	body := make([]string, 0, len(l.m.Lines))
	for _, ln := range l.m.Lines {
		body = append(body, ln.Raw)
	}
	msg := "JSON in a message: its quotes, braces and repeated keys cost more than the facts they carry; write one fact per line"
	joined := strings.Join(body, "\n")
	if est, ok := EstimateJSON([]byte(joined)); ok {
		now := l.countTokens(joined)
		if lines := l.countTokens(est); lines < now {
			msg += " (the JSON costs " + plural(now, "token") + "; as fact lines about " + strconv.Itoa(lines) + ")"
		}
	}
	l.warn(first.Num, first.Col(), "json-body", msg, "")
}

var jsonPairRe = lazyre.New(`^"[^"]+"\s*:\s*\S`)

// EstimateJSON rewrites a JSON document as convention fact lines, one per scalar value, keyed
// by the value's own key, with dates in ISO basic: a rough but honest lower bound on what the
// same facts cost as a convention message. ok is false when data is not JSON.
func EstimateJSON(data []byte) (string, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", false
	}
	if dec.More() {
		return "", false
	}
	var lines []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(k, x[k])
			}
		case []any:
			var scalars []string
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any:
					walk(key, e)
				default:
					scalars = append(scalars, scalarText(e))
				}
			}
			if len(scalars) > 0 {
				lines = append(lines, strings.TrimSpace(key+" "+strings.Join(scalars, ", ")))
			}
		default:
			lines = append(lines, strings.TrimSpace(key+" "+scalarText(x)))
		}
	}
	walk("", v)
	out := "v1 note topic to all n=" + strconv.Itoa(len(lines)) + "\n"
	for _, ln := range lines {
		out += ln + "\n"
	}
	return out, true
}

func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "none"
	case string:
		for _, h := range findDates(x) {
			if h.rewrite != "" {
				return x[:h.start] + h.rewrite + x[h.end:]
			}
		}
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
