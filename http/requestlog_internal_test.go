package http

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogRequestAsLogAttrs holds logRequest to what slog's LogAttrs writes for the same
// record, in both of the formats `parley serve` logs in, with the caller's source added: the
// same line, its source in this package, and nothing at all below the handler's level.
func TestLogRequestAsLogAttrs(t *testing.T) {
	attrs := []slog.Attr{slog.String("method", "POST"), slog.String("path", "/v1/rooms/r/messages"),
		slog.Int("status", 201), slog.Int64("bytes", 60), slog.Duration("duration", 1500*time.Microsecond),
		slog.String("remote", "127.0.0.1:4242"), slog.String("query", "a=b c"), slog.String("seat", "r/lead")}
	// The time differs between two calls, and the source (here the test's own file for
	// LogAttrs): the time is cut, and the source's file kept apart, to be checked alone.
	var files []string
	opts := &slog.HandlerOptions{AddSource: true, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		switch a.Key {
		case slog.TimeKey:
			return slog.Attr{}
		case slog.SourceKey:
			src := a.Value.Any().(*slog.Source)
			files = append(files, src.File[strings.LastIndex(src.File, "/")+1:])
			return slog.String(slog.SourceKey, "caller")
		}
		return a
	}}
	for _, format := range []string{"text", "json"} {
		var got, want bytes.Buffer
		newLog := func(w *bytes.Buffer) *slog.Logger {
			if format == "json" {
				return slog.New(slog.NewJSONHandler(w, opts))
			}
			return slog.New(slog.NewTextHandler(w, opts))
		}
		s := &Server{log: newLog(&got)}
		ctx := context.Background()
		for range 2 { // the first call finds the source, the second reuses it
			files = files[:0]
			s.logRequest(ctx, slog.LevelInfo, attrs)
			if len(files) != 1 || files[0] != "http.go" {
				t.Errorf("%s: the line's source is %v, not this package's http.go", format, files)
			}
			newLog(&want).LogAttrs(ctx, slog.LevelInfo, "request", attrs...)
		}
		if got.String() != want.String() {
			t.Errorf("%s: logRequest wrote\n%s\nLogAttrs writes\n%s", format, got.String(), want.String())
		}
		got.Reset()
		s.logRequest(ctx, slog.LevelDebug, attrs)
		if got.Len() != 0 {
			t.Errorf("%s: a debug line reached an info handler: %s", format, got.String())
		}
	}
}
