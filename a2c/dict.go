package a2c

import (
	"sort"
	"strings"

	"github.com/parleyhq/parley/trace"
)

// Dictionary is text both sides hold before a session starts. Splices may point into it
// as if it were the start of the session; a session that does so is charged its tokens.
type Dictionary struct {
	Text string
}

// TrainOptions bounds dictionary learning.
type TrainOptions struct {
	MaxBytes    int // total size; default 4096
	MinSessions int // a string must occur in at least this many sessions; default 2
	MinLen      int // shortest string kept, in bytes; default 32
}

// Train learns a dictionary from training sessions: the string values (texts, tool
// results, descriptions) that recur in the most sessions, scored by bytes saved, until
// MaxBytes. It sees only the sessions it is given: pass the training split.
func Train(sessions [][]trace.Value, opt TrainOptions) *Dictionary {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 4096
	}
	if opt.MinSessions <= 0 {
		opt.MinSessions = 2
	}
	if opt.MinLen <= 0 {
		opt.MinLen = 32
	}
	count := map[string]int{}
	for _, s := range sessions {
		seen := map[string]bool{}
		var walk func(v *trace.Value)
		walk = func(v *trace.Value) {
			switch v.Kind {
			case trace.String:
				if len(v.Str) >= opt.MinLen && !seen[v.Str] {
					seen[v.Str] = true
					count[v.Str]++
				}
			case trace.Array:
				for i := range v.Items {
					walk(&v.Items[i])
				}
			case trace.Object:
				for i := range v.Members {
					walk(&v.Members[i].Value)
				}
			}
		}
		for i := range s {
			walk(&s[i])
		}
	}
	type cand struct {
		s     string
		score int
	}
	var cs []cand
	for s, n := range count {
		if n >= opt.MinSessions {
			cs = append(cs, cand{s, n * len(s)})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].s < cs[j].s
	})
	var b strings.Builder
	for _, c := range cs {
		// The dictionary holds strings as a raw field would write them, so that a
		// splice can copy them into a line unchanged.
		lit := string(appendEscaped(nil, c.s, '|'))
		if b.Len()+len(lit)+1 > opt.MaxBytes {
			continue
		}
		b.WriteString(lit)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return &Dictionary{}
	}
	return &Dictionary{Text: strings.TrimSuffix(b.String(), "\n")}
}
