package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parleyhq/parley"
)

// topicMsg returns a convention message of seat on topic ("" for a text message, which has
// none).
func topicMsg(room, seat, topic string, i int) *parley.Message {
	m := msg(room, seat, fmt.Sprintf("v1 note %s to all n=1\nfact %d", topic, i))
	m.Topic = topic
	if topic == "" {
		m.Format, m.Intent, m.Body = parley.FormatText, "", fmt.Sprintf("plain %d", i)
		m.Hash = hash(m.Body)
	}
	return m
}

// testTopicMessages checks TopicMessages against Messages: the same messages, in seq order,
// less every other topic's and every other room's, with after and limit as Messages has them.
func testTopicMessages(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	// limiter: topics a, b and none interleaved, a holding seqs 1, 4, 5, 7, 10, 13, 16, 19;
	// other: topic a too, which limiter's reads must not see.
	topics := []string{"a", "b", "", "a", "a", "b", "a", "", "b", "a", "b", "", "a", "", "", "a", "b", "b", "a"}
	want := map[string][]int64{}
	for i, topic := range topics {
		m := MustAppend(t, s, &parley.Append{Message: topicMsg("limiter", "alice", topic, i)})
		want[topic] = append(want[topic], m.Seq)
		MustAppend(t, s, &parley.Append{Message: topicMsg("other", "bob", "a", i)})
	}
	all, err := s.Messages(ctx(t), "limiter", 0, 0)
	if err != nil {
		t.Fatalf("Messages: %v", err)
	}
	for _, topic := range []string{"a", "b", ""} {
		got, err := s.TopicMessages(ctx(t), "limiter", topic, 0, 0)
		if err != nil {
			t.Fatalf("TopicMessages(%q): %v", topic, err)
		}
		// The same messages as the room's whole history, filtered: every field alike.
		var filtered []*parley.Message
		for _, m := range all {
			if m.Topic == topic {
				filtered = append(filtered, m)
			}
		}
		if !reflect.DeepEqual(got, filtered) {
			t.Fatalf("TopicMessages(%q) = %v, want the room's messages on it %v", topic, seqs(got), seqs(filtered))
		}
		if !slices.Equal(seqs(got), want[topic]) {
			t.Fatalf("TopicMessages(%q) = %v, want %v", topic, seqs(got), want[topic])
		}
	}

	a := want["a"] // 1 4 5 7 10 13 16 19
	for _, tt := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, -1, a},
		{0, 1, a[:1]},
		{0, 3, a[:3]},
		{a[0], 3, a[1:4]},     // after a seq on the topic
		{a[1] + 1, 2, a[3:5]}, // after a seq on another topic
		{a[5], 100, a[6:]},
		{a[len(a)-1], 0, nil},
		{1000, 5, nil},
	} {
		got, err := s.TopicMessages(ctx(t), "limiter", "a", tt.after, tt.limit)
		if err != nil {
			t.Fatalf("TopicMessages(a, after %d, limit %d): %v", tt.after, tt.limit, err)
		}
		for _, m := range got {
			if m.Room != "limiter" || m.Topic != "a" {
				t.Fatalf("TopicMessages(limiter, a) returned #%d of room %q topic %q", m.Seq, m.Room, m.Topic)
			}
		}
		if !slices.Equal(seqs(got), tt.want) {
			t.Fatalf("TopicMessages(a, after %d, limit %d) = %v, want %v", tt.after, tt.limit, seqs(got), tt.want)
		}
	}

	// Paging by the last seq read walks the topic exactly once.
	var paged []int64
	for after := int64(0); ; {
		page, err := s.TopicMessages(ctx(t), "limiter", "a", after, 3)
		if err != nil {
			t.Fatalf("TopicMessages: %v", err)
		}
		paged = append(paged, seqs(page)...)
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].Seq
	}
	if !slices.Equal(paged, a) {
		t.Fatalf("paging topic a by 3 = %v, want %v", paged, a)
	}

	// Topics match exactly: no prefix, no case folding; an unknown topic or room has none.
	for _, tt := range []struct{ room, topic string }{
		{"limiter", "A"}, {"limiter", "a%"}, {"limiter", "nosuch"}, {"nosuch", "a"},
	} {
		got, err := s.TopicMessages(ctx(t), tt.room, tt.topic, 0, 0)
		if err != nil || got != nil {
			t.Fatalf("TopicMessages(%q, %q) = %v (nil %v), %v; want nil", tt.room, tt.topic, seqs(got), got == nil, err)
		}
	}
}

func seqs(msgs []*parley.Message) []int64 {
	var s []int64
	for _, m := range msgs {
		s = append(s, m.Seq)
	}
	return s
}

// testTopicAsks checks TopicAsks against Asks: the same asks, in every state, by seq and
// line, less every other topic's and every other room's.
func testTopicAsks(t *testing.T, s parley.Store) {
	MustCreateRoom(t, s, "limiter")
	MustCreateRoom(t, s, "other")
	ask := func(room, from, topic string, lines ...int) *parley.Message {
		t.Helper()
		m := topicMsg(room, from, topic, lines[0])
		var asks []*parley.Ask
		for _, l := range lines {
			asks = append(asks, &parley.Ask{Line: l, From: from, To: "bob", Topic: topic, Text: fmt.Sprintf("%s %d?", topic, l),
				Due: ptr(t0.Add(time.Duration(l) * time.Hour))})
		}
		return MustAppend(t, s, &parley.Append{Message: m, Asks: asks})
	}
	m1 := ask("limiter", "alice", "a", 4, 2) // lines out of order: read back by line
	ask("other", "alice", "a", 2)
	m3 := ask("limiter", "carol", "b", 2)
	m4 := ask("limiter", "alice", "a", 3)
	ask("limiter", "alice", "", 2)

	// bob answers m1 on topic b (the answer's own topic does not move the ask); m4's lapses.
	answer := topicMsg("limiter", "bob", "b", 99)
	answer.Re = m1.Seq
	m6 := MustAppend(t, s, &parley.Append{Message: answer, Answers: []int64{m1.Seq}})
	open, err := s.TopicAsks(ctx(t), "limiter", "a")
	if err != nil || len(open) != 3 {
		t.Fatalf("TopicAsks(a) = %s, %v; want 3", dumpAsks(open), err)
	}
	lapse := topicMsg("limiter", parley.SystemSeat, "a", 100)
	lapse.Re = m4.Seq
	m7 := MustAppend(t, s, &parley.Append{Message: lapse, Lapses: open[2]})

	all, err := s.Asks(ctx(t), "limiter", "")
	if err != nil {
		t.Fatalf("Asks: %v", err)
	}
	for _, topic := range []string{"a", "b", ""} {
		got, err := s.TopicAsks(ctx(t), "limiter", topic)
		if err != nil {
			t.Fatalf("TopicAsks(%q): %v", topic, err)
		}
		var filtered []*parley.Ask
		for _, a := range all {
			if a.Topic == topic {
				filtered = append(filtered, a)
			}
		}
		if len(got) == 0 || !reflect.DeepEqual(got, filtered) {
			t.Fatalf("TopicAsks(%q) = %s, want %s", topic, dumpAsks(got), dumpAsks(filtered))
		}
	}
	got, _ := s.TopicAsks(ctx(t), "limiter", "a")
	var lines []string
	for _, a := range got {
		lines = append(lines, fmt.Sprintf("%d:%d:%s", a.Seq, a.Line, a.Room))
	}
	if want := []string{fmt.Sprintf("%d:2:limiter", m1.Seq), fmt.Sprintf("%d:4:limiter", m1.Seq), fmt.Sprintf("%d:3:limiter", m4.Seq)}; !slices.Equal(lines, want) {
		t.Fatalf("TopicAsks(a) = %v, want %v (by seq, then line; room limiter only)", lines, want)
	}
	wantStates(t, got, []string{parley.AskAnswered, parley.AskAnswered, parley.AskLapsed}, []int64{m6.Seq, m6.Seq, m7.Seq})
	if b, _ := s.TopicAsks(ctx(t), "limiter", "b"); len(b) != 1 || b[0].Seq != m3.Seq || b[0].State != parley.AskOpen {
		t.Fatalf("TopicAsks(b) = %s, want carol's open ask", dumpAsks(b))
	}
	for _, tt := range []struct{ room, topic string }{{"limiter", "A"}, {"limiter", "nosuch"}, {"nosuch", "a"}} {
		got, err := s.TopicAsks(ctx(t), tt.room, tt.topic)
		if err != nil || got != nil {
			t.Fatalf("TopicAsks(%q, %q) = %s (nil %v), %v; want nil", tt.room, tt.topic, dumpAsks(got), got == nil, err)
		}
	}
}
