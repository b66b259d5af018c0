package trace

// SWEAgent reads one SWE-agent .traj file. The session is "history", the messages the
// model saw, in order:
//
//   - assistant messages with an "action" and no tool_calls are tool_calls to
//     "environment" (text = content, args = action as a string); with tool_calls they
//     follow the OpenAI mapping (see chatRecords).
//   - messages whose message_type is "observation", and (in files that predate
//     message_type) user messages right after an action, are tool_results from
//     "environment" (result = content, meta.role keeps the source role); role tool
//     follows the OpenAI mapping.
//   - everything else maps as a chat message; every other field (thought, agent,
//     message_type, is_demo, tool_call_ids, …) stays in meta.
//
// A trailing status from "swe-agent" keeps the file's other fields (info, environment,
// replay_config, …). "trajectory" is left out when history exists: it is the
// environment's step log and repeats history's texts (and, in newer files, the whole
// history at every step). Files without history use trajectory instead: each step is a
// tool_call (text = response, args = action) and a tool_result (result = observation),
// other step fields in meta.
func SWEAgent(rel string, data []byte) (Session, error) {
	v, err := ParseJSON(data)
	if err != nil {
		return Session{}, err
	}
	s := Session{ID: rel}
	var status metaBuilder
	hist, hasHist := v.Get("history")
	hasHist = hasHist && hist.Kind == Array
	for i := range v.Members {
		m := &v.Members[i]
		switch {
		case m.Key == "history" && hasHist && &m.Value == hist:
			for j := range hist.Items {
				after := len(s.Records) > 0 && s.Records[len(s.Records)-1].Kind == KindToolCall &&
					s.Records[len(s.Records)-1].To == "environment"
				s.Records = append(s.Records, sweMessage(&hist.Items[j], after)...)
			}
		case m.Key == "trajectory" && hasHist:
		case m.Key == "trajectory" && m.Value.Kind == Array:
			for j := range m.Value.Items {
				s.Records = append(s.Records, sweStep(&m.Value.Items[j])...)
			}
		default:
			status.add(m.Key, m.Value)
		}
	}
	s.Records = append(s.Records, Record{Kind: KindStatus, From: "swe-agent", Meta: status.value()})
	return s, nil
}

func sweMessage(msg *Value, afterAction bool) []Record {
	recs := chatRecords(msg, "tool_calls")
	if len(recs) != 1 || recs[0].Kind != KindMessage {
		return recs
	}
	r := recs[0]
	meta := r.Meta
	observation := afterAction && r.From == "user"
	if mt, ok := meta.Get("message_type"); ok && mt.Kind == String && mt.Str == "observation" {
		observation = true
	}
	if observation {
		r.Kind, r.From, r.To = KindToolResult, "environment", "assistant"
		if r.Text != "" {
			t := StringValue(r.Text)
			r.Result, r.Text = &t, ""
		}
		// The role is no longer implied by the kind; keep it.
		r.Meta = withMember(r.Meta, "role", StringValue(roleOf(msg)))
		return []Record{r}
	}
	if r.From == "assistant" && meta != nil {
		for i := range meta.Members {
			if meta.Members[i].Key == "action" && meta.Members[i].Value.Kind == String {
				a := meta.Members[i].Value
				rest := Value{Kind: Object, Members: append(append([]Member{}, meta.Members[:i]...), meta.Members[i+1:]...)}
				r.Kind, r.To, r.Args = KindToolCall, "environment", &a
				r.Meta = &rest
				if len(rest.Members) == 0 {
					r.Meta = nil
				}
				return []Record{r}
			}
		}
	}
	return recs
}

func roleOf(msg *Value) string {
	if r, ok := msg.Get("role"); ok && r.Kind == String {
		return r.Str
	}
	return ""
}

func sweStep(step *Value) []Record {
	call := Record{Kind: KindToolCall, From: "assistant", To: "environment"}
	res := Record{Kind: KindToolResult, From: "environment", To: "assistant"}
	var meta metaBuilder
	hasObs := false
	for i := range step.Members {
		m := &step.Members[i]
		switch {
		case m.Key == "response" && m.Value.Kind == String && call.Text == "" && m.Value.Str != "":
			call.Text = m.Value.Str
		case m.Key == "action" && call.Args == nil:
			a := m.Value
			call.Args = &a
		case m.Key == "observation" && !hasObs:
			o := m.Value
			res.Result, hasObs = &o, true
		default:
			meta.add(m.Key, m.Value)
		}
	}
	call.Meta = meta.value()
	if !hasObs {
		return []Record{call}
	}
	return []Record{call, res}
}
