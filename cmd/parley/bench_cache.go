package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/parleyhq/parley/bench/cache"
	"github.com/parleyhq/parley/figure"
	"github.com/parleyhq/parley/room"
)

const benchCacheDescription = `
Measure what a provider's prompt cache saves on a room, from the provider's own usage
reports, beside the room server's projection (the Stats tab's) for the same reads.

The room is replayed as its readers would read it: after each message, each of --readers
R readers sends the byte-stable history so far after a fixed short instruction (the
instruction first, so every prompt extends the previous one byte for byte). Per call the
provider's prompt_tokens and cached_tokens (usage.prompt_tokens_details.cached_tokens) are
printed as reported; the measured input cost is (prompt - cached) + cached × --cached-rate,
in token-equivalents. The projection is the server's model: each reader is a seat reading
from the start, whose previous read's history is counted as cached (room.ProjectCache).

The two count different things on purpose: the provider's prompts hold the instruction and
the chat template too, and its cache may also serve one reader's prompt to another; the
server sees history reads only, per seat. Providers cache only past a minimum prefix (OpenAI:
1,024 tokens, in steps of 128), so a short room shows no cached tokens at first.

The history comes from a running server (--room ROOM, with --url and --token as for
'parley read'; the replay's reads there count in the room's stats) or from a file holding
what 'parley read' prints (--history FILE, or - for standard input). --limit N replays the
first N messages only.

What a run costs: messages × R calls; call k sends the instruction and the first k
messages, so input tokens grow with the square of the room's length: a 100-message room
of about 60 tokens a message with R=5 sends about 500 calls and 1.5 million input tokens
(at a cached rate of 0.1, about 0.2 million token-equivalents when the cache hits). Start
with --limit and --dry-run, which prints every request with its token count.

--json prints {"calls":[{"seq","reader","prompt_tokens","cached_tokens",
"completion_tokens","history_tokens","projected_cached_tokens"}…],"prompt_tokens",
"cached_tokens","measured_cost","projected_cost"}.`

var benchCacheExamples = `  parley read team > team.txt
  parley bench cache --history team.txt --readers 2 --limit 20 --dry-run | tail -1
` + llmSetup("parley bench cache --room team --readers 5") + `
  parley bench cache --history team.txt --json | jq '{measured_cost, projected_cost}'`

func runBenchCache(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench cache", "bench cache (--room ROOM | --history FILE) [--readers R] [--cached-rate X] [--limit N] [--json] [model flags]",
		benchCacheDescription, benchCacheExamples)
	lf := addLLMFlags(fs, "")
	cf := addClientFlags(fs)
	roomName := fs.String("room", "", "replay `ROOM` from the running server (--url, --token)")
	historyFile := fs.String("history", "", "replay the history in `FILE` (as 'parley read' prints it; - for standard input)")
	readersN := fs.Int("readers", 5, "`R` readers read after every message")
	rate := fs.Float64("cached-rate", room.CachedPriceRate, "the price of a cached input token relative to a fresh one")
	limit := fs.Int("limit", 0, "replay the first `N` messages only (0: all)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErrorf("unexpected argument %q", rest[0])
	}
	if (*roomName == "") == (*historyFile == "") {
		return usageErrorf("give one of --room ROOM and --history FILE")
	}
	if *readersN < 1 {
		return usageErrorf("--readers must be at least 1, not %d", *readersN)
	}
	if *rate < 0 || *rate > 1 {
		return usageErrorf("--cached-rate must be between 0 and 1, not %v", *rate)
	}
	if *limit < 0 {
		return usageErrorf("--limit must not be negative")
	}
	var history, where string
	if *historyFile != "" {
		if history, err = readInput(e, *historyFile); err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
		where = displayName(*historyFile)
	} else {
		c, err := cf.client(e, false)
		if err != nil {
			return err
		}
		b, _, err := c.HistoryAll(ctx, nil, *roomName, 0)
		if err != nil {
			return c.fail(err)
		}
		history, where = string(b), "room "+*roomName+" at "+c.base
	}
	blocks, err := cache.Split(history)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if *limit > 0 && *limit < len(blocks) {
		blocks = blocks[:*limit]
	}
	client, err := lf.client(e)
	if err != nil {
		return err
	}
	res, runErr := cache.Run(ctx, client, blocks, cache.Config{Readers: *readersN, Rate: *rate, Encoding: client.Encoding()})
	if res == nil {
		return runErr
	}
	if client.DryRun() {
		var hist int64
		for _, c := range res.Calls {
			hist += int64(c.HistoryTokens)
		}
		fmt.Fprintf(e.stdout, "dry run: %d calls shown (%d messages × %d readers), %d prompt tokens in the messages' contents (%d of them history), %s\n",
			len(res.Calls), len(blocks), *readersN, res.PromptTokens, hist, client.Encoding().Name())
		return runErr
	}
	if *asJSON {
		if res.Calls == nil {
			res.Calls = []cache.Call{}
		}
		if err := writeJSONIndent(e.stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.stdout, cacheText(res, where, client.Model(), *readersN, len(blocks)))
	}
	if runErr != nil {
		return fmt.Errorf("stopped after %d calls: %w", len(res.Calls), runErr)
	}
	return nil
}

func cacheText(res *cache.Result, where, model string, readers, messages int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Prompt cache, measured\n\n%s; model %s; %d messages × %d readers = %d calls; cached rate %s\n\n",
		where, model, messages, readers, len(res.Calls), strconv.FormatFloat(res.Rate, 'g', -1, 64))
	t := figure.Table{
		Header: []string{"seq", "reader", "prompt", "cached", "completion", "history (server)", "projected cached"},
		Align:  []figure.Align{figure.Right, figure.Right, figure.Right, figure.Right, figure.Right, figure.Right, figure.Right},
	}
	for _, c := range res.Calls {
		t.Rows = append(t.Rows, []string{strconv.FormatInt(c.Seq, 10), strconv.Itoa(c.Reader), strconv.Itoa(c.PromptTokens),
			strconv.Itoa(c.CachedTokens), strconv.Itoa(c.CompletionTokens), strconv.Itoa(c.HistoryTokens), strconv.Itoa(c.ProjectedCachedTokens)})
	}
	b.WriteString(t.Markdown())
	proj := room.ProjectCache(res.HistoryTokens, res.ProjectedCached, res.Rate)
	s := figure.Table{
		Header: []string{"", "input tokens", "cached", "cost without cache", "cost with cache", "saving"},
		Align:  []figure.Align{figure.Left, figure.Right, figure.Right, figure.Right, figure.Right, figure.Right},
	}
	s.Rows = append(s.Rows,
		[]string{"measured (provider's usage)", strconv.Itoa(res.PromptTokens), strconv.Itoa(res.CachedTokens),
			strconv.Itoa(res.PromptTokens), fmt.Sprintf("%.1f", res.MeasuredCost), percentSaved(float64(res.PromptTokens), res.MeasuredCost)},
		[]string{"projected (server, history only)", strconv.FormatInt(proj.ReadTokens, 10), strconv.FormatInt(proj.CachedTokens, 10),
			fmt.Sprintf("%.0f", proj.UncachedCost), fmt.Sprintf("%.1f", proj.CachedCost), percentSaved(proj.UncachedCost, proj.CachedCost)})
	b.WriteString("\n")
	b.WriteString(s.Markdown())
	if res.Unreported > 0 {
		fmt.Fprintf(&b, "\n%d calls' answers carried no usage object: they count as 0 tokens above.\n", res.Unreported)
	}
	return b.String()
}

func percentSaved(full, with float64) string {
	if full <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*(full-with)/full)
}
