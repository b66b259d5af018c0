package aacp

import (
	"strings"
)

var taskVerbs = map[string]string{
	"FETCH": "Fetch", "PROC": "Process", "FLAG": "Flag", "RESOLVE": "Resolve", "LOG": "Log",
	"SEND": "Send", "BUILD": "Build", "MERGE": "Merge", "CALC": "Calculate", "REPORT": "Report",
	"ACK": "Acknowledge", "SYNC": "Synchronise",
}

var domNames = map[string]string{
	"HR": "human resources", "FIN": "finance", "SALES": "sales", "LEGAL": "legal", "IT": "IT",
	"CS": "customer service", "MKT": "marketing",
}

var fieldNames = map[string]string{
	"res": "resource", "period": "period", "filter": "filter", "fields": "fields", "fmt": "format",
	"src": "source", "src_prev": "previous source", "rules": "rules", "validate": "validate against",
	"tmpl": "template", "data_ptr": "data at", "amt": "amount", "ccy": "currency", "sup": "supplier",
	"match": "match", "terms": "terms", "type": "type", "party": "party", "clause": "clause",
	"issue": "issue", "risk": "risk", "block": "block", "flags": "flags", "req": "required",
	"highlight": "highlight", "status": "status", "to": "to", "subj": "subject", "att": "attachment",
	"flag_msg": "flag message", "tone": "tone", "sentiment": "sentiment", "actor": "actor",
	"chain": "chain", "prog": "progress", "ltv": "lifetime value", "loyalty": "loyalty",
	"urgency": "urgency",
}

var priorities = map[string]string{"1": "high", "2": "normal", "3": "low"}

// Decode explains a packet in plain English, one statement per line: what to do and in which
// domain, for whom, where the result goes, then every other field by its name. Values are
// shown as written (they are data), lists with their items separated by commas. The English
// is advisory; the packet is the record.
func Decode(p *Packet) string {
	var b strings.Builder
	verb := taskVerbs[p.Task]
	if verb == "" {
		verb = "Do " + p.Task
	}
	dom := domNames[p.Dom]
	if dom == "" {
		dom = p.Dom
	}
	b.WriteString(verb)
	if dom != "" {
		b.WriteString(", in " + dom)
	}
	if v, ok := p.Get("p"); ok {
		if name := priorities[v]; name != "" {
			b.WriteString(", priority " + v + " (" + name + ")")
		} else {
			b.WriteString(", priority " + v)
		}
	}
	b.WriteString(".\n")
	if to := Addressees(p); len(to) > 0 {
		b.WriteString("For: " + strings.Join(to, ", ") + ".\n")
	}
	for _, f := range p.Fields {
		switch f.Key {
		case "p", "to", "return", "aacp":
			continue
		}
		name := fieldNames[f.Key]
		switch {
		case name != "":
			name = strings.ToUpper(name[:1]) + name[1:]
		case strings.Contains(f.Key, "."):
			name = f.Key + " (an organisation-private field)"
		default:
			name = f.Key + " (not a v1.1 field)"
		}
		b.WriteString(name + ": " + readable(f.Value) + ".\n")
	}
	if v, ok := p.Get("return"); ok && v != "" {
		b.WriteString("Send the result to " + v + ".\n")
	}
	if v, ok := p.Get("aacp"); ok {
		b.WriteString("Protocol: AACP " + v + ". This English is advisory; the packet is the record.\n")
	}
	return b.String()
}

// readable spaces out list items, and turns the underscores that stand for spaces back into
// spaces where an item reads as a phrase (two or more underscores). A single underscore
// (emp_salary) and UPPER_SNAKE names (UPSTASH_REDIS_REST_URL) are identifiers and stay.
func readable(v string) string {
	items := strings.Split(v, ",")
	for i, item := range items {
		if strings.Count(item, "_") < 2 {
			continue
		}
		parts := strings.Split(item, "_")
		var b strings.Builder
		for j, part := range parts {
			if j > 0 {
				if isUpperWord(parts[j-1]) && isUpperWord(part) {
					b.WriteByte('_')
				} else {
					b.WriteByte(' ')
				}
			}
			b.WriteString(part)
		}
		items[i] = b.String()
	}
	return strings.Join(items, ", ")
}

func isUpperWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && len(s) > 1
}
