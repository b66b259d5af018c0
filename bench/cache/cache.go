// Package cache measures what a provider's prompt cache saves on a room, from the provider's
// own usage reports, beside the room server's projection for the same reads.
//
// A room is replayed as its readers would read it: after each message, each of R readers
// sends the byte-stable history so far (every message up to and including that one) after a
// fixed short instruction. The instruction comes first and never changes, and each history
// extends the previous one byte for byte, so a provider's cache can serve every earlier
// prompt's bytes. The provider says how many it did serve
// (usage.prompt_tokens_details.cached_tokens); that, priced at the cached rate, is the
// measured cost. The projection is the Stats tab's (room.ProjectCache over
// room.CacheableRead): each reader is a seat reading from the start, whose previous read
// ended one message earlier.
//
// The two count different things on purpose: the provider counts its whole prompt (the
// instruction, the chat template, the history) and caches across readers that send the
// same bytes; the server sees only history reads, per seat. Both are shown side by side.
package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/parleyhq/parley/bpe"
	"github.com/parleyhq/parley/internal/lazyre"
	"github.com/parleyhq/parley/llm"
	"github.com/parleyhq/parley/room"
)

// Instruction is the fixed system message every read carries, first.
const Instruction = "You are a seat in a team room. The room's history so far follows. Reply with the single word: ok."

// Block is one message of history: its seq and its bytes, the blank line after it included.
type Block struct {
	Seq  int64
	Text string
}

var header = lazyre.New(`(?m)^#([0-9]+) `)

// Split cuts history text (as the server serves it, or as `parley read` prints it) into
// message blocks at each header line "#<seq> ". A body cannot hold such a line: the server
// refuses it.
func Split(history string) ([]Block, error) {
	idx := header.FindAllStringSubmatchIndex(history, -1)
	if len(idx) == 0 {
		return nil, errors.New("no message headers (#<seq> <seat> <time>) in the history")
	}
	if idx[0][0] != 0 {
		return nil, fmt.Errorf("the history does not start with a message header: it starts %.40q", history)
	}
	var out []Block
	for i, m := range idx {
		end := len(history)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		seq, err := strconv.ParseInt(history[m[2]:m[3]], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("message header %q: %v", history[m[0]:m[3]], err)
		}
		if len(out) > 0 && seq <= out[len(out)-1].Seq {
			return nil, fmt.Errorf("message #%d follows #%d: history runs in increasing seq", seq, out[len(out)-1].Seq)
		}
		out = append(out, Block{Seq: seq, Text: history[m[0]:end]})
	}
	return out, nil
}

// Call is one read sent to the model.
type Call struct {
	Seq              int64 `json:"seq"`    // the last message in the prompt
	Reader           int   `json:"reader"` // 1..R
	PromptTokens     int   `json:"prompt_tokens"`
	CachedTokens     int   `json:"cached_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	// HistoryTokens is the history part as the server counts it (o200k_base);
	// ProjectedCachedTokens is the part of it the server's projection counts as cached.
	HistoryTokens         int `json:"history_tokens"`
	ProjectedCachedTokens int `json:"projected_cached_tokens"`
}

// Result is a replay's outcome. The JSON has exactly the five members the command prints.
type Result struct {
	Calls        []Call  `json:"calls"`
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	MeasuredCost float64 `json:"measured_cost"`
	// ProjectedCost is the server's projection (room.ProjectCache) of the same reads.
	ProjectedCost float64 `json:"projected_cost"`

	// For the text report.
	HistoryTokens, ProjectedCached int64   `json:"-"`
	Rate                           float64 `json:"-"`
	Unreported                     int     `json:"-"` // calls whose answer had no usage
}

// Config configures Run.
type Config struct {
	Readers int     // R (at least 1)
	Rate    float64 // the cached rate, e.g. 0.1
	// Encoding counts the history as the server does (nil: o200k_base).
	Encoding *bpe.Encoding
}

// Messages is the prompt of a read of the given blocks.
func Messages(blocks []Block) []llm.Message {
	n := 0
	for _, b := range blocks {
		n += len(b.Text)
	}
	h := make([]byte, 0, n)
	for _, b := range blocks {
		h = append(h, b.Text...)
	}
	return []llm.Message{llm.System(Instruction), llm.User(string(h))}
}

// Run replays the blocks: after each, each reader reads the history so far.
func Run(ctx context.Context, c *llm.Client, blocks []Block, cfg Config) (*Result, error) {
	if cfg.Readers < 1 {
		cfg.Readers = 1
	}
	enc := cfg.Encoding
	if enc == nil {
		var err error
		if enc, err = bpe.Get("o200k_base"); err != nil {
			return nil, err
		}
	}
	counts := make([]int, len(blocks))
	for i, b := range blocks {
		counts[i] = enc.Count(b.Text)
	}
	type mark struct {
		seen        bool
		after, last int64
	}
	marks := make([]mark, cfg.Readers)
	res := &Result{Rate: cfg.Rate}
	var measured float64
	for i := range blocks {
		msgs := Messages(blocks[:i+1])
		last := blocks[i].Seq
		for r := range cfg.Readers {
			// The server's model of this read: it starts at after=0, as the reader's last did.
			hist, cached := 0, 0
			for j := 0; j <= i; j++ {
				hist += counts[j]
				if room.CacheableRead(marks[r].seen, marks[r].after, marks[r].last, 0, blocks[j].Seq) {
					cached += counts[j]
				}
			}
			marks[r] = mark{seen: true, after: 0, last: last}
			resp, err := c.Chat(ctx, msgs)
			if err != nil {
				return res, fmt.Errorf("read of #%d by reader %d: %w", last, r+1, err)
			}
			u := resp.Usage
			call := Call{
				Seq: last, Reader: r + 1, PromptTokens: u.PromptTokens, CachedTokens: u.CachedTokens,
				CompletionTokens: u.CompletionTokens, HistoryTokens: hist, ProjectedCachedTokens: cached,
			}
			if !u.Reported && !resp.DryRun {
				res.Unreported++
			}
			res.Calls = append(res.Calls, call)
			res.PromptTokens += u.PromptTokens
			res.CachedTokens += u.CachedTokens
			measured += float64(u.PromptTokens-u.CachedTokens) + cfg.Rate*float64(u.CachedTokens)
			res.HistoryTokens += int64(hist)
			res.ProjectedCached += int64(cached)
		}
	}
	res.MeasuredCost = measured
	res.ProjectedCost = room.ProjectCache(res.HistoryTokens, res.ProjectedCached, cfg.Rate).CachedCost
	return res, nil
}
