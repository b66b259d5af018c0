package http

import (
	"log/slog"
	"net/http"
	"time"
)

// NewHTTPServer returns an http.Server for h with the limits a server on the open network
// needs: capped header size, a deadline for headers and for the whole request body (a slow
// client cannot hold a connection open by trickling bytes), and idle connections reaped.
// There is no write timeout: event streams stay open for hours, and every other response is
// small and written at once.
func NewHTTPServer(addr string, h http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
