package http

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/parleyhq/parley"
)

// maxImportBytes caps an import's body: a room is read whole before its one transaction.
const maxImportBytes = 4 << 30

// importReadTime is how long an import's body may take to arrive, in place of the server's
// read deadline (sized for small requests).
const importReadTime = 30 * time.Minute

// archiver returns the service's export and import, or an error when it has none.
func (s *Server) archiver() (parley.RoomArchiver, error) {
	a, ok := s.svc.(parley.RoomArchiver)
	if !ok {
		return nil, parley.Errorf(parley.ENOTFOUND, "this server does not export or import rooms")
	}
	return a, nil
}

// lazyHeader sets the export's headers on its first write, so that an error found before
// anything is written is still answered as JSON.
type lazyHeader struct {
	w       http.ResponseWriter
	started bool
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		h := l.w.Header()
		h.Set("Content-Type", "application/x-ndjson")
		h.Set("Cache-Control", "no-store")
		l.w.WriteHeader(http.StatusOK)
	}
	return l.w.Write(p)
}

// handleExport streams the room as JSON lines (admin). An error after the first line cuts the
// stream short; the file then lacks its end record, which import refuses.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	a, err := s.archiver()
	if err != nil {
		return err
	}
	lw := &lazyHeader{w: w}
	err = a.ExportRoom(r.Context(), c, r.PathValue("room"), lw)
	if err != nil && lw.started {
		s.log.Error("export cut short", "room", r.PathValue("room"), "err", err)
		return nil
	}
	return err
}

// handleImport creates a room from an export in the body (admin): 201 with what it holds.
func (s *Server) handleImport(w http.ResponseWriter, r *http.Request, c *parley.Caller) error {
	a, err := s.archiver()
	if err != nil {
		return err
	}
	if c == nil || !c.Admin {
		return parley.Errorf(parley.EFORBIDDEN, "only the server admin imports rooms").
			WithHint("run `parley import` with the server's admin token")
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(importReadTime))
	r.Body = http.MaxBytesReader(w, r.Body, maxImportBytes)
	res, err := a.ImportRoom(r.Context(), c, r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return parley.Errorf(parley.ETOOLARGE, "the export is over %d bytes", int64(maxImportBytes))
		}
		return err
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

var _ io.Writer = (*lazyHeader)(nil)
