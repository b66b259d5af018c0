package trace

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// SyntheticReAct generates n short ReAct-style sessions, the same for the same seed on
// every machine: a user's question, then one to three rounds of thought (a plan), action
// (a tool call whose arguments are a JSON string) and observation (a tool result in
// prose), then the final answer; 5 to 11 handoffs, mostly prose. The prose is drawn
// word by word from fixed lists, so it repeats little within a session, as real
// questions and search snippets do. It is a stand-in for short agent sessions, not a
// benchmark of any real system.
func SyntheticReAct(seed int64, n int) []Session {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eac7a11))
	out := make([]Session, n)
	for i := range out {
		out[i] = reactSession(rng, fmt.Sprintf("react/%d/%04d", seed, i))
	}
	return out
}

var (
	reactSubjects = []string{"the river Tamsin", "the Orlov bridge", "the painter Ida Marsh", "the city of Calvera", "the novel Northern Lights Fade",
		"the chemist Rafael Ibarra", "the Kestrel Mountains", "the band The Paper Kites", "the ship Meridian", "the Halden observatory",
		"the composer Lena Voss", "the island of Serrat", "the company Bluefield Mills", "the treaty of Arden", "the film The Quiet Harbour"}
	reactAsks = []string{"When was %s founded, and who was behind it?", "How long is %s, and which region does it cross?",
		"What is %s best known for?", "Which award did %s receive first, and in what year?", "Who succeeded the founder of %s?",
		"How many people lived near %s at its peak?"}
	reactTools   = []string{"search", "lookup", "wiki_search", "get_page"}
	reactNouns   = []string{"archive", "record", "survey", "harbour", "village", "station", "council", "museum", "railway", "festival", "valley", "guild", "census", "factory", "library", "charter", "market", "province", "expedition", "journal"}
	reactVerbs   = []string{"opened", "described", "moved", "recorded", "joined", "expanded", "restored", "named", "visited", "published", "closed", "rebuilt", "funded", "mapped", "founded"}
	reactAdjs    = []string{"northern", "early", "small", "coastal", "former", "local", "annual", "public", "regional", "private", "first", "second", "larger", "old", "new"}
	reactNames   = []string{"Marta Keel", "Jonas Brandt", "Elif Sarin", "Tomas Reyes", "Ada Lindqvist", "Pieter Olsen", "Noor Haddad", "Carl Webb", "Yuki Tanabe", "Ines Moreau"}
	reactThought = []string{"I need to find %s first.", "The result mentions %s; I should look that up.", "I still do not know %s, so I will search for it.",
		"That answers part of it; next I need %s.", "The page is about something else; let me search for %s instead."}
)

// reactSentence writes one sentence of plausible prose.
func reactSentence(rng *rand.Rand) string {
	year := 1700 + rng.IntN(320)
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("In %d the %s %s %s the %s %s.", year, pick(rng, reactAdjs), pick(rng, reactNouns), pick(rng, reactVerbs), pick(rng, reactAdjs), pick(rng, reactNouns))
	case 1:
		return fmt.Sprintf("%s %s a %s %s near the %s in %d.", pick(rng, reactNames), pick(rng, reactVerbs), pick(rng, reactAdjs), pick(rng, reactNouns), pick(rng, reactNouns), year)
	case 2:
		return fmt.Sprintf("It is about %d km from the %s %s, and %d people were counted there.", 2+rng.IntN(400), pick(rng, reactAdjs), pick(rng, reactNouns), 100+rng.IntN(90000))
	default:
		return fmt.Sprintf("The %s was %s by %s after the %s %s.", pick(rng, reactNouns), pick(rng, reactVerbs), pick(rng, reactNames), pick(rng, reactAdjs), pick(rng, reactNouns))
	}
}

func reactSession(rng *rand.Rand, id string) Session {
	subject := pick(rng, reactSubjects)
	s := Session{ID: id}
	add := func(r Record) { s.Records = append(s.Records, r) }
	add(Record{Kind: KindMessage, From: "user", To: "agent", Text: fmt.Sprintf(pick(rng, reactAsks), subject)})
	target := subject
	rounds := 1 + rng.IntN(3)
	var facts []string
	for r := 0; r < rounds; r++ {
		add(Record{Kind: KindPlan, From: "agent", Text: fmt.Sprintf(pick(rng, reactThought), target)})
		tool := pick(rng, reactTools)
		callID := fmt.Sprintf("call_%06x", rng.Uint32()&0xffffff)
		args := StringValue(fmt.Sprintf(`{"query": %q}`, target))
		add(Record{Kind: KindToolCall, From: "agent", To: tool, Tool: tool, CallID: callID, Args: &args})
		var obs strings.Builder
		fmt.Fprintf(&obs, "%s: ", strings.ToUpper(target[:1])+target[1:])
		for k, m := 0, 2+rng.IntN(4); k < m; k++ {
			if k > 0 {
				obs.WriteByte(' ')
			}
			sent := reactSentence(rng)
			obs.WriteString(sent)
			facts = append(facts, sent)
		}
		res := StringValue(obs.String())
		add(Record{Kind: KindToolResult, From: tool, To: "agent", Tool: tool, CallID: callID, Result: &res})
		target = "the " + pick(rng, reactAdjs) + " " + pick(rng, reactNouns) + " of " + pick(rng, reactNames)
	}
	add(Record{Kind: KindFinal, From: "agent", To: "user", Text: "Answer: " + pick(rng, facts)})
	return s
}
