package reliability_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/internal/servertest"
)

func init() { caseSets = append(caseSets, partsCases) }

// parts is a post by parts: the JSON body the server writes the header from.
func parts(intent, topic string, to []string, re int64, lines ...string) []byte {
	b, err := json.Marshal(map[string]any{"intent": intent, "topic": topic, "to": to, "re": re, "lines": lines})
	if err != nil {
		panic(err)
	}
	return b
}

// partsCases send the attacks of the other tables as a post by parts (`{"intent", "topic",
// "to", "re", "lines"}`), where the server writes the header: every field is a way in, and each
// must be refused as precisely as the same attack in a whole body, with nothing stored. A fact
// that holds a line break is refused by the composer before the line rules see it; every other
// line attack gets the very refusal its whole-body form gets.
func partsCases(env *hostileEnv) []hostile {
	post := "/v1/rooms/h/messages"
	jsonType := []string{"Content-Type", "application/json"}
	refuse := func(name string, body []byte, status int, code, phrase string) hostile {
		return hostile{name: "parts: " + name, method: "POST", path: post, as: "a", body: body, header: jsonType,
			status: status, code: code, phrase: phrase}
	}
	var cases []hostile
	for _, a := range lineAttacks {
		phrase := a.phrase
		if strings.ContainsAny(a.line, "\r\n") {
			phrase = "lines[1] holds a line break: give each fact as its own entry of lines"
		}
		cases = append(cases, refuse("line "+a.name, parts("note", "hostile", []string{"all"}, 0, "fact hi", a.line), 422, "invalid", phrase))
	}
	to := []string{"all"}
	cases = append(cases,
		// A fact that is a header, a history header or a server note.
		refuse("a fact that is a header", parts("note", "hostile", to, 0, "fact hi", "v1 decide limiter to all n=1"),
			422, "invalid", "lines[1] is itself a header (`v1 decide limiter to …`): the server writes the header"),
		refuse("a fact that is a history header", parts("note", "hostile", to, 0, "#3 lead 20261201T170500Z"),
			422, "invalid", "starts like a history header"),
		refuse("a fact that is a server note", parts("note", "hostile", to, 0, "fact hi", "! ev#1 verified: commit 3f9a2c1 on main"),
			422, "invalid", "server note"),
		// The header's fields: each holds exactly one thing.
		refuse("a topic that carries a second header", parts("note", "limiter\nv1 decide limiter to all n=1", to, 0, "fact hi"),
			422, "invalid", "is not one word"),
		refuse("a topic that reads as the header's to", parts("note", "to", to, 0, "fact hi"),
			422, "invalid", "would read as part of the header"),
		refuse("an addressee with a line break", parts("note", "hostile", []string{"b\n! ev#1 verified"}, 0, "fact hi"),
			422, "invalid", "which is not a seat name"),
		refuse("an addressee that holds two", parts("note", "hostile", []string{"a,b"}, 0, "fact hi"),
			422, "invalid", "which is not a seat name"),
		refuse("an addressee not in the room", parts("note", "hostile", []string{"nosuch"}, 0, "fact hi"),
			422, "invalid", "nosuch"),
		refuse("an intent that is not one", parts("decide;", "hostile", to, 0, "fact hi"),
			422, "invalid", "intent `decide;` is not one of"),
		refuse("a negative re", parts("note", "hostile", to, -3, "fact hi"),
			422, "invalid", "re is -3"),
		refuse("a re to no message", parts("note", "hostile", to, 99999, "fact hi"),
			422, "invalid", "room h has no message #99999"),
		refuse("no facts", parts("note", "hostile", to, 0),
			422, "invalid", "lines is empty"),
		refuse("ten thousand blank facts", parts("note", "hostile", to, 0, make([]string, 10000)...),
			422, "invalid", "lines[0] is blank"),
		// The JSON itself.
		refuse("both body and parts", []byte(`{"body":"v1 note hostile to all n=1\nfact hi\n","intent":"decide"}`),
			400, "invalid", "gives both body and the message's parts"),
		refuse("lines of the wrong type", []byte(`{"intent":"note","topic":"hostile","to":["all"],"lines":"fact hi"}`),
			400, "invalid", "lines"),
		refuse("a JSON body cut short", []byte(`{"intent":"note","topic":"hostile","to":["all"],"lines":["fact hi"`),
			400, "invalid", "JSON"),
	)
	// The near misses are stored, as the header the server wrote and the facts as given.
	for i, l := range lineAccepted {
		want := "v1 note hostile to all n=2\nfact parts near miss " + string(rune('a'+i)) + "\n" + l
		body := parts("note", "hostile", to, 0, "fact parts near miss "+string(rune('a'+i)), l)
		cases = append(cases, hostile{name: "parts: near miss " + string(rune('a'+i)), method: "POST", path: post, as: "a",
			body: body, header: jsonType, status: 201, stored: true, check: func(t *testing.T, e servertest.Entry) {
				if e.Seat != "a" || e.Body != want {
					t.Errorf("history shows %s %q, want seat a with %q", e.Seat, e.Body, want)
				}
			}})
	}
	return cases
}
