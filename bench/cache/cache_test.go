package cache_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/parleyhq/parley/bench/cache"
	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/llm/llmtest"
)

const history = "#1 lead 20261201T100000Z\nv1 request limiter to builder n=1\nreq rate limit POST /api/search\n\n" +
	"#2 builder 20261201T100500Z\nv1 report limiter to lead n=1\ndone#1 limiter lib/rate-limit.ts\n! ev#1 unverified\n\n" +
	"#3 lead 20261201T101000Z\nv1 note limiter to builder re 2 n=1\nthanks, merging\n\n"

func TestSplit(t *testing.T) {
	bs, err := cache.Split(history)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || bs[0].Seq != 1 || bs[2].Seq != 3 || bs[0].Text+bs[1].Text+bs[2].Text != history {
		t.Fatalf("%+v", bs)
	}
	for _, bad := range []string{"", "hello\n#1 a b\n", "#2 a b\n\n#1 a b\n\n"} {
		if _, err := cache.Split(bad); err == nil {
			t.Errorf("Split(%q) passed", bad)
		}
	}
}

func TestMeasuredAndProjected(t *testing.T) {
	// Two readers, three messages: six reads. The stand-in reports what a provider would:
	// the first read of each prefix is cached up to the previous prompt, the second reader's
	// identical prompt is cached almost whole.
	usage := []llm.Usage{
		{PromptTokens: 1100, CachedTokens: 0}, {PromptTokens: 1100, CachedTokens: 1024},
		{PromptTokens: 1150, CachedTokens: 1024}, {PromptTokens: 1150, CachedTokens: 1024},
		{PromptTokens: 1190, CachedTokens: 1152}, {PromptTokens: 1190, CachedTokens: 1152},
	}
	var script []llmtest.Reply
	for _, u := range usage {
		script = append(script, llmtest.Reply{Content: "ok", Usage: llm.Usage{PromptTokens: u.PromptTokens, CompletionTokens: 1, CachedTokens: u.CachedTokens}})
	}
	s := llmtest.New(script...)
	defer s.Close()
	c, err := llm.New(llm.Config{Endpoint: s.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	bs, _ := cache.Split(history)
	res, err := cache.Run(context.Background(), c, bs, cache.Config{Readers: 2, Rate: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	// Usage passes through: every call's figures are the stand-in's.
	for i, call := range res.Calls {
		if call.PromptTokens != usage[i].PromptTokens || call.CachedTokens != usage[i].CachedTokens || call.CompletionTokens != 1 {
			t.Errorf("call %d: %+v, want %+v", i, call, usage[i])
		}
	}
	// By hand: prompt 6880, cached 5376; measured = (6880-5376) + 0.1·5376 = 1504 + 537.6.
	if res.PromptTokens != 6880 || res.CachedTokens != 5376 || math.Abs(res.MeasuredCost-2041.6) > 1e-9 {
		t.Errorf("totals %d/%d, measured %v; want 6880/5376, 2041.6", res.PromptTokens, res.CachedTokens, res.MeasuredCost)
	}
	// The projection: reads of h1, h1+h2, h1+h2+h3 by each reader; each read after the first
	// has its previous read's history cached. read = 2(3a+2b+c), cached = 2(2a+b).
	enc, _ := bpe.Get("o200k_base")
	a, b, cc := enc.Count(bs[0].Text), enc.Count(bs[1].Text), enc.Count(bs[2].Text)
	read, cached := 2*(3*a+2*b+cc), 2*(2*a+b)
	want := float64(read-cached) + 0.1*float64(cached)
	if math.Abs(res.ProjectedCost-want) > 1e-9 {
		t.Errorf("projected %v, want %v (a=%d b=%d c=%d)", res.ProjectedCost, want, a, b, cc)
	}
	// Byte-stable: each read's prompt extends the previous one's.
	reqs := s.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := reqs[i-1].Last("user"), reqs[i].Last("user")
		if !strings.HasPrefix(cur, prev) || reqs[i].Messages[0].Content != cache.Instruction {
			t.Errorf("read %d does not extend read %d", i, i-1)
		}
	}
	if reqs[5].Last("user") != history {
		t.Error("the last read is not the whole history")
	}
}

func TestBudgetStopsTheReplay(t *testing.T) {
	s := llmtest.New()
	s.Respond = func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "ok"} }
	defer s.Close()
	c, _ := llm.New(llm.Config{Endpoint: s.URL, Model: "m", MaxCalls: 4})
	bs, _ := cache.Split(history)
	res, err := cache.Run(context.Background(), c, bs, cache.Config{Readers: 2, Rate: 0.1})
	if err == nil || !strings.Contains(err.Error(), "--max-calls") || len(res.Calls) != 4 || len(s.Requests()) != 4 {
		t.Fatalf("err %v after %d calls, %d requests", err, len(res.Calls), len(s.Requests()))
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(history)
	f.Add("#1 a\n#1 b\n")
	f.Fuzz(func(t *testing.T, s string) {
		bs, err := cache.Split(s)
		if err != nil {
			return
		}
		var j strings.Builder
		for i, b := range bs {
			j.WriteString(b.Text)
			if i > 0 && b.Seq <= bs[i-1].Seq {
				t.Fatalf("seqs out of order in %q", s)
			}
		}
		if j.String() != s {
			t.Fatalf("blocks of %q do not join back", s)
		}
	})
}
