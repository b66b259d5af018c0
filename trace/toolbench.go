package trace

// ToolBench reads one ToolBench or StableToolBench answer file. ok is false (and err nil)
// for JSON files that are not answer files (no "answer_generation" object), so a folder
// can be read whole.
//
// The session is the final conversation: the last entry of
// answer_generation.train_messages (the earlier entries are the same conversation cut
// after each step, kept as training examples, so they add no handoff). Files without one
// (an empty or missing train_messages) fall back to the last try's chain ("trys", CoT
// runs) and then to the last explored branch of the search tree ("tree": the path that
// follows the last child at every level, which is the branch DFSDT ended on).
//
// Around the conversation come two records of the run itself: a leading plan from
// "toolbench" (text = the query; meta.function = the tool catalog and meta.forward_args),
// and a trailing status with every other field of the file and of answer_generation
// (win, final_answer, finish_type, query_count, …). Left out on purpose, and only these:
// the search tree, compare_candidates and the non-final tries and train_messages
// entries; they record the search, not handoffs, and repeat the conversation's own text
// many times over, which would flatter any codec.
func ToolBench(rel string, data []byte) (Session, bool, error) {
	v, err := ParseJSON(data)
	if err != nil {
		return Session{}, false, err
	}
	ag, ok := v.Get("answer_generation")
	if !ok || ag.Kind != Object {
		return Session{}, false, nil
	}
	s := Session{ID: rel}
	plan := Record{Kind: KindPlan, From: "toolbench", To: "assistant"}
	var planMeta, status metaBuilder
	var conv *Value
	for i := range ag.Members {
		m := &ag.Members[i]
		switch {
		case m.Key == "query" && m.Value.Kind == String && plan.Text == "":
			plan.Text = m.Value.Str
		case m.Key == "function" && !hasKey(planMeta, "function"):
			planMeta.add("function", m.Value)
		case m.Key == "train_messages" && m.Value.Kind == Array && conv == nil && len(m.Value.Items) > 0 &&
			m.Value.Items[len(m.Value.Items)-1].Kind == Array:
			conv = &m.Value.Items[len(m.Value.Items)-1]
		case m.Key == "train_messages":
			// Earlier prefixes are dropped (see above); an empty list is kept as a fact.
			if m.Value.Kind != Array || len(m.Value.Items) == 0 {
				status.add("train_messages", m.Value)
			}
		default:
			status.add(m.Key, m.Value)
		}
	}
	var body []Record
	if conv != nil {
		for i := range conv.Items {
			body = append(body, chatRecords(&conv.Items[i], "tool_calls")...)
		}
	}
	for i := range v.Members {
		m := &v.Members[i]
		switch m.Key {
		case "answer_generation":
		case "forward_args":
			planMeta.add("forward_args", m.Value)
		case "tree":
			if conv == nil && m.Value.Kind == Object {
				if root, ok := m.Value.Get("tree"); ok {
					body = treePath(root)
					status.add("conversation_source", StringValue("tree"))
				}
			}
		case "trys":
			if conv == nil && body == nil && m.Value.Kind == Array && len(m.Value.Items) > 0 {
				last := &m.Value.Items[len(m.Value.Items)-1]
				if chain, ok := last.Get("chain"); ok && chain.Kind == Array {
					body = chainRecords(chain.Items)
					status.add("conversation_source", StringValue("trys"))
				}
			}
		case "compare_candidates":
		default:
			status.add(m.Key, m.Value)
		}
	}
	plan.Meta = planMeta.value()
	s.Records = append(s.Records, plan)
	s.Records = append(s.Records, body...)
	s.Records = append(s.Records, Record{Kind: KindStatus, From: "toolbench", Meta: status.value()})
	return s, true, nil
}

func hasKey(m metaBuilder, k string) bool {
	_, ok := m.v.Get(k)
	return ok
}

// treePath follows the last child at every level from the root and maps the nodes.
func treePath(root *Value) []Record {
	var nodes []Value
	n := root
	for {
		kids, ok := n.Get("children")
		if !ok || kids.Kind != Array || len(kids.Items) == 0 {
			break
		}
		n = &kids.Items[len(kids.Items)-1]
		nodes = append(nodes, *n)
	}
	return chainRecords(nodes)
}

// chainRecords maps DFSDT/CoT nodes: a Thought is a message from the assistant; an Action
// and the Action Input after it make one tool_call (tool = the action, args = the input
// text), and the input's observation, when there is one, a tool_result. Finish is final.
// Node fields other than description, children and observation go to meta (action / input).
func chainRecords(nodes []Value) []Record {
	var out []Record
	var pending *Record
	nodeMeta := func(n *Value, skip ...string) *Value {
		var mb metaBuilder
	next:
		for i := range n.Members {
			for _, s := range skip {
				if n.Members[i].Key == s {
					continue next
				}
			}
			mb.add(n.Members[i].Key, n.Members[i].Value)
		}
		return mb.value()
	}
	flush := func() {
		if pending != nil {
			out = append(out, *pending)
			pending = nil
		}
	}
	for i := range nodes {
		n := &nodes[i]
		typ, desc := "", ""
		if t, ok := n.Get("node_type"); ok && t.Kind == String {
			typ = t.Str
		}
		if d, ok := n.Get("description"); ok && d.Kind == String {
			desc = d.Str
		}
		switch typ {
		case "Action":
			flush()
			r := Record{Kind: KindToolCall, From: "assistant", To: "tool", Tool: desc}
			if desc == "Finish" {
				r.Kind = KindFinal
			}
			if m := nodeMeta(n, "description", "children"); m != nil {
				r.Meta = &Value{Kind: Object, Members: []Member{{Key: "action", Value: *m}}}
			}
			pending = &r
		case "Action Input":
			r := Record{Kind: KindToolCall, From: "assistant", To: "tool"}
			if pending != nil {
				r = *pending
				pending = nil
			}
			a := StringValue(desc)
			r.Args = &a
			if m := nodeMeta(n, "description", "children", "observation", "observation_code"); m != nil {
				r.Meta = withMember(r.Meta, "input", *m)
			}
			out = append(out, r)
			if obs, ok := n.Get("observation"); ok {
				res := Record{Kind: KindToolResult, From: "tool", To: "assistant", Tool: r.Tool}
				if obs.Kind == String && obs.Str != "" {
					o := *obs
					res.Result = &o
				} else {
					res.Meta = withMember(res.Meta, "observation", *obs)
				}
				if code, ok := n.Get("observation_code"); ok {
					res.Meta = withMember(res.Meta, "observation_code", *code)
				}
				out = append(out, res)
			}
		default:
			flush()
			r := Record{Kind: KindMessage, From: "assistant", Text: desc}
			if m := nodeMeta(n, "description", "children"); m != nil {
				r.Meta = m
			}
			if typ == "" || desc == "" {
				// Keep an empty description's presence exact.
				if d, ok := n.Get("description"); ok && (d.Kind != String || d.Str == "") {
					r.Meta = withMember(r.Meta, "description", *d)
				}
			}
			out = append(out, r)
		}
	}
	flush()
	return out
}
