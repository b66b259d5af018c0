package room

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/fulltext"
	"github.com/parleyhq/parley/internal/textline"
)

// Search finds the room's messages that hold words of query (see parley.RoomService.Search).
//
// The query is plain words (fulltext.Words): every character but letters and numbers only
// separates them, so no input is query syntax to either store's index; its first
// parley.SearchMaxWords distinct words count. A message matches when it holds any of them,
// and the store ranks it (SQLite: bm25, PostgreSQL: ts_rank). Each result quotes the lines
// of the message, as history shows them, that hold a word of the query.
//
// The access rules are History's: the server admin and the room's seats, a revoked token
// being no seat at all; under a held context nothing is returned once the token has stopped
// being valid. A search that returns messages counts for the calling seat as one read
// ("reads"), one search ("searches"), and the tokens of the lines it quotes ("read_tokens");
// it does not move the seat's history read mark, so it does not disturb the prompt-cache
// projection.
func (s *Service) Search(ctx context.Context, c *parley.Caller, room, query string, limit int) (*parley.SearchResults, error) {
	if err := canSee(c, room); err != nil {
		return nil, err
	}
	switch {
	case strings.TrimSpace(query) == "":
		return nil, parley.Errorf(parley.EINVALID, "the search query is empty").
			WithHint("give the words to look for, e.g. q=redis limiter")
	case len(query) > parley.SearchMaxQuery:
		return nil, parley.Errorf(parley.EINVALID, "the search query is %d bytes long, over the %d a query may be", len(query), parley.SearchMaxQuery).
			WithHint("search for a few distinctive words; only the first %d count", parley.SearchMaxWords)
	case !utf8.ValidString(query):
		return nil, parley.Errorf(parley.EINVALID, "the search query is not valid UTF-8").
			WithHint("send the query as UTF-8 text")
	case limit < 0 || limit > parley.SearchMaxLimit:
		return nil, parley.Errorf(parley.EINVALID, "limit=%d: a search returns 1 to %d results", limit, parley.SearchMaxLimit).
			WithHint("leave limit out for %d, or give 1 to %d", parley.SearchDefaultLimit, parley.SearchMaxLimit)
	}
	if limit == 0 {
		limit = parley.SearchDefaultLimit
	}
	if _, err := s.room(ctx, room); err != nil {
		return nil, err
	}
	out := &parley.SearchResults{Query: query, Results: []parley.SearchHit{}}
	words := fulltext.Words(query)
	if len(words) == 0 {
		return out, nil // only punctuation: no word to look for, so nothing matches
	}
	msgs, err := s.store.Search(ctx, room, words, limit+1)
	if err != nil {
		return nil, s.internal(ctx, "search", err)
	}
	if len(msgs) > limit {
		msgs, out.More = msgs[:limit], true
	}
	if len(msgs) == 0 {
		return out, nil
	}
	// As History: nothing read is returned once the hold's token has stopped being valid.
	if err := s.confirmHold(ctx); err != nil {
		return nil, err
	}
	var quoted strings.Builder
	for _, m := range msgs {
		h := parley.SearchHit{Seq: m.Seq, Seat: m.Seat, Time: m.Time.UTC().Format(TimeFormat), Topic: m.Topic,
			Lines: matchingLines(m.Body, words)}
		for _, l := range h.Lines {
			quoted.WriteString(l)
			quoted.WriteByte('\n')
		}
		out.Results = append(out.Results, h)
	}
	if c.Seat != nil {
		s.addStat(ctx, room, c.Seat.Name, "read_tokens", int64(s.tok.Count(quoted.String())))
		s.addStat(ctx, room, c.Seat.Name, "reads", 1)
		s.addStat(ctx, room, c.Seat.Name, "searches", 1)
	}
	return out, nil
}

// matchingLines are the lines of body, as history shows them, that hold one of words: at
// most parley.SearchMaxLines, each cut to parley.SearchMaxLineBytes. When none does (the
// index split a word otherwise than fulltext does), the first line stands for the message.
func matchingLines(body string, words []string) []string {
	lines := textline.Split(strings.TrimSuffix(body, "\n"))
	var out []string
	for _, l := range lines {
		if len(out) == parley.SearchMaxLines {
			break
		}
		if fulltext.Holds(l, words) {
			out = append(out, cutLine(l))
		}
	}
	if len(out) == 0 && len(lines) > 0 {
		out = append(out, cutLine(lines[0]))
	}
	return out
}

// cutLine shortens a line to parley.SearchMaxLineBytes, at a rune boundary, marked with "…".
func cutLine(l string) string {
	if len(l) <= parley.SearchMaxLineBytes {
		return l
	}
	n := parley.SearchMaxLineBytes - len("…")
	for n > 0 && !utf8.RuneStart(l[n]) {
		n--
	}
	return l[:n] + "…"
}
