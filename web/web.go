// Package web is the room server's edge for people: server-rendered HTML pages over
// parley.RoomService, mounted at / by `parley serve`. It shows the rooms, a room's transcript
// (updating live over Server-Sent Events), the state record per topic, the signed-in seat's
// inbox, and a stats page with server-rendered SVG charts. Human seats can post.
//
// Pages are html/template with embedded assets and no build step; every page is complete
// without JavaScript, and the one small script only appends new messages as they arrive.
//
// Security model. A person signs in by pasting a seat or admin token into a form (POST).
// The server keeps the token in memory under a random 256-bit session id and sets only that
// id in an HttpOnly, SameSite=Strict cookie: tokens never appear in URLs, pages or logs, and
// every request re-authenticates the token, so a revoked seat is signed out at once; its live
// stream ends the moment the token is revoked or rotated (RoomService.Hold). Every
// state-changing form carries the session's CSRF token, and cross-origin browser POSTs are
// refused outright (net/http's CrossOriginProtection), which also covers the sign-in form.
// Message text is data: every byte of it goes through html/template's escaping.
//
// A refused post (the convention's findings, a rate limit, a full disk) redirects back to the
// room (303, POST/redirect/GET), so a reload never posts again; the draft and the refusal wait
// in the session on the server, shown once by the next view of that room.
//
// Meaning is never colour alone: modality lines and evidence verdicts carry their word, and
// verdicts a symbol (✓ verified, ? unverified or unproven, ✗ failed) and a class
// (verdict-verified, verdict-unverified, verdict-failed). Every time is written one way, ISO
// basic UTC to the second as history writes it, in a <time> whose title is the long form.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/internal/forwarded"
	"github.com/parleyhq/parley/internal/redact"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure the web UI.
type Options struct {
	// Secure marks the session cookie Secure. Set it when the server is reached over HTTPS
	// (directly or behind a proxy); requests that arrive over TLS, or through a trusted
	// proxy that says the client used HTTPS (X-Forwarded-Proto), get it regardless.
	Secure bool
	// TrustedOrigins are origins ("https://parley.example.com") whose browser requests are
	// let through the cross-origin check even when the Host header the server sees differs
	// (a proxy that rewrites it). The server passes its --public-url.
	TrustedOrigins []string
	// SessionIdle signs a session out after this long without a request (default 12h).
	SessionIdle time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Heartbeat is the interval of keep-alive comments on the live stream (default 25s).
	Heartbeat time.Duration
	// TranscriptLimit is how many of a room's latest messages its page shows (default 200).
	TranscriptLimit int
	// Done, when closed, ends the live streams, so that http.Server.Shutdown need not wait
	// for them (pass the serve command's context's Done).
	Done <-chan struct{}
}

// cookieName is the session cookie. The __Host- prefix would pin it to a secure origin, which
// a plain-HTTP localhost server is not, so it is used only when the cookie is Secure.
const cookieName = "parley_session"

// Handler serves the web UI.
type Handler struct {
	svc    parley.RoomService
	log    *slog.Logger
	opts   Options
	pages  map[string]*template.Template
	msgTpl *template.Template
	mux    *http.ServeMux

	mu       sync.Mutex
	sessions map[string]*session
}

// session is one signed-in browser.
type session struct {
	token    string // the seat or admin token, only ever held here
	csrf     string
	lastSeen time.Time
	flash    *flash // a refused post, shown once by the room page it redirected to
}

// flash is a refused post kept for the page after the redirect (POST/redirect/GET): the draft
// and why it was refused. It is kept in the session on the server, never in a cookie or URL,
// read once, and dropped after flashTTL.
type flash struct {
	room        string
	draft       string
	parts       *partsForm // a refused post by parts, as typed
	err, hint   string
	diagnostics []parley.Diagnostic
	at          time.Time
}

// flashTTL bounds how long a refused post waits for the page that shows it.
const flashTTL = 5 * time.Minute

// setFlash keeps f for the session's next view of f.room.
func (h *Handler) setFlash(sid string, f *flash) {
	h.mu.Lock()
	if s, ok := h.sessions[sid]; ok {
		s.flash = f
	}
	h.mu.Unlock()
}

// takeFlash returns and forgets the session's refused post for room, if one is waiting and
// fresh.
func (h *Handler) takeFlash(sid, room string) *flash {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[sid]
	if !ok || s.flash == nil || s.flash.room != room {
		return nil
	}
	f := s.flash
	s.flash = nil
	if h.opts.Now().Sub(f.at) > flashTTL {
		return nil
	}
	return f
}

// NewHandler returns the web UI over svc. logger may be nil.
func NewHandler(svc parley.RoomService, logger *slog.Logger, opts Options) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.SessionIdle <= 0 {
		opts.SessionIdle = 12 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 25 * time.Second
	}
	if opts.TranscriptLimit <= 0 {
		opts.TranscriptLimit = 200
	}
	h := &Handler{
		svc:      svc,
		log:      logger,
		opts:     opts,
		sessions: map[string]*session{},
	}
	h.parseTemplates()

	static, _ := fs.Sub(staticFS, "static")
	m := http.NewServeMux()
	m.Handle("GET /static/", cacheStatic(http.StripPrefix("/static/", http.FileServerFS(static))))
	m.HandleFunc("GET /{$}", h.page(h.rooms))
	m.HandleFunc("GET /signin", h.signinForm)
	m.HandleFunc("POST /signin", h.signin)
	m.HandleFunc("POST /signout", h.signout)
	m.HandleFunc("GET /rooms/{room}", h.page(h.room))
	m.HandleFunc("POST /rooms/{room}/post", h.page(h.post))
	m.HandleFunc("GET /rooms/{room}/state", h.page(h.state))
	m.HandleFunc("GET /rooms/{room}/stats", h.page(h.stats))
	m.HandleFunc("GET /rooms/{room}/search", h.page(h.search))
	m.HandleFunc("GET /ui/rooms/{room}/events", h.events)
	h.routeLab(m)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		u, _ := h.current(r)
		h.render(w, r, http.StatusNotFound, "error", &view{Title: "Not found", User: u,
			Error: "There is no page at this address."})
	})
	h.mux = m
	cop := http.NewCrossOriginProtection()
	for _, o := range opts.TrustedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			logger.Warn("web: trusted origin ignored", "origin", o, "err", err)
		}
	}
	return cop.Handler(h)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// The pages need nothing from elsewhere: no inline script or style, no frames, no
	// foreign origins. A message that somehow slipped past escaping still could not run.
	hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
	h.mux.ServeHTTP(w, r)
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}

// randomID returns 32 random bytes, base64url: session ids and CSRF tokens.
func randomID() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// user is the signed-in browser for one request.
type user struct {
	sid    string
	csrf   string
	caller *parley.Caller
}

// Name is how the page header shows the user.
func (u *user) Name() string {
	if u.caller.Seat == nil {
		return "admin"
	}
	return u.caller.Seat.Name + " @ " + u.caller.Seat.Room
}

// current returns the request's session and its freshly authenticated caller, or nil when
// the browser is not signed in (or its token stopped working, which ends the session).
func (h *Handler) current(r *http.Request) (*user, error) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	now := h.opts.Now()
	h.mu.Lock()
	s, ok := h.sessions[ck.Value]
	if ok && now.Sub(s.lastSeen) > h.opts.SessionIdle {
		delete(h.sessions, ck.Value)
		ok = false
	}
	var token, csrf string
	if ok {
		s.lastSeen = now
		token, csrf = s.token, s.csrf
	}
	h.mu.Unlock()
	if !ok {
		return nil, nil
	}
	c, err := h.svc.Authenticate(r.Context(), token)
	if err != nil {
		if parley.ErrorCode(err) == parley.EUNAUTHORIZED {
			h.endSession(ck.Value)
			return nil, nil
		}
		return nil, err
	}
	return &user{sid: ck.Value, csrf: csrf, caller: c}, nil
}

func (h *Handler) endSession(sid string) {
	h.mu.Lock()
	delete(h.sessions, sid)
	h.mu.Unlock()
}

// sweep drops idle sessions; called on sign-in, so the map cannot grow without bound.
func (h *Handler) sweep(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, s := range h.sessions {
		if now.Sub(s.lastSeen) > h.opts.SessionIdle {
			delete(h.sessions, id)
		}
	}
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   h.opts.Secure || forwarded.HTTPS(r),
		SameSite: http.SameSiteStrictMode,
	})
}

// checkCSRF compares the form's csrf field with the session's, in constant time.
func checkCSRF(r *http.Request, u *user) bool {
	got := r.PostFormValue("csrf")
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(u.csrf)) == 1
}

func (h *Handler) signinForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signin", &view{Title: "Sign in", Next: safeNext(r.URL.Query().Get("next"))})
}

func (h *Handler) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if token == "" {
		h.render(w, r, http.StatusBadRequest, "signin", &view{Title: "Sign in", Next: next, Error: "Paste a seat or admin token."})
		return
	}
	c, err := h.svc.Authenticate(r.Context(), token)
	if err != nil {
		status, msg := http.StatusUnauthorized, "That token is not valid here: it is unknown or was revoked."
		if parley.ErrorCode(err) != parley.EUNAUTHORIZED {
			h.log.Error("web: sign in", "err", err)
			status, msg = http.StatusInternalServerError, "The server failed; try again."
		}
		h.render(w, r, status, "signin", &view{Title: "Sign in", Next: next, Error: msg})
		return
	}
	now := h.opts.Now()
	h.sweep(now)
	// A fresh id on every sign-in, and the browser's previous session ended: an id planted
	// before sign-in (session fixation) or left over from another seat is never reused.
	if ck, err := r.Cookie(cookieName); err == nil && ck.Value != "" {
		h.endSession(ck.Value)
	}
	sid := randomID()
	h.mu.Lock()
	h.sessions[sid] = &session{token: token, csrf: randomID(), lastSeen: now}
	h.mu.Unlock()
	h.setCookie(w, r, sid, 0)
	if next == "/" && c.Seat != nil {
		next = "/rooms/" + c.Seat.Room
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (h *Handler) signout(w http.ResponseWriter, r *http.Request) {
	u, err := h.current(r)
	if err != nil {
		h.fail(w, r, nil, err)
		return
	}
	if u != nil {
		if !checkCSRF(r, u) {
			h.render(w, r, http.StatusForbidden, "error", &view{Title: "Forbidden", User: u, Error: "The form was stale or forged (CSRF check failed). Reload the page and try again."})
			return
		}
		h.endSession(u.sid)
	}
	h.setCookie(w, r, "", -1)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// safeNext keeps a post-sign-in redirect on this site: a path, never a URL elsewhere.
// Browsers read `//host`, `/\host` and, after dropping tabs and newlines, `/<TAB>/host` as
// another origin, and a redirect's target may be percent-decoded again on the way, so the
// checks hold for every decoding of p: it starts with one '/', holds no control character,
// no backslash and no "//". Anything else falls back to the front page.
func safeNext(p string) string {
	if p == "" || len(p) > 2048 || !strings.HasPrefix(p, "/") {
		return "/"
	}
	cur := p
	for range 4 {
		if !sameOriginPath(cur) {
			return "/"
		}
		dec, err := url.PathUnescape(cur)
		if err != nil {
			return "/"
		}
		if dec == cur {
			return p
		}
		cur = dec
	}
	return "/" // still decoding after four rounds: nobody links like that
}

// sameOriginPath checks one decoding of a redirect target.
func sameOriginPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "//") || strings.ContainsRune(p, '\\') {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// page wraps a handler that needs a signed-in user: without one it answers 401 with the
// sign-in form, so the page works without JavaScript or redirects.
func (h *Handler) page(fn func(w http.ResponseWriter, r *http.Request, u *user) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, err := h.current(r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		if u == nil {
			if r.Method == http.MethodPost {
				h.setCookie(w, r, "", -1)
			}
			// The front page is where everyone starts: the form is the page, not a refusal.
			if r.URL.Path == "/" {
				h.render(w, r, http.StatusOK, "signin", &view{Title: "Sign in", Next: "/"})
				return
			}
			h.render(w, r, http.StatusUnauthorized, "signin", &view{Title: "Sign in", Next: safeNext(r.URL.Path),
				Error: "Sign in to see this page."})
			return
		}
		if r.Method == http.MethodPost && !checkCSRF(r, u) {
			h.render(w, r, http.StatusForbidden, "error", &view{Title: "Forbidden", User: u, Error: "The form was stale or forged (CSRF check failed). Reload the page and try again."})
			return
		}
		if err := fn(w, r, u); err != nil {
			h.fail(w, r, u, err)
		}
	}
}

// statusOf is the web edge's one mapping from parley error codes to HTTP status.
var statusOf = map[string]int{
	parley.EINVALID:      http.StatusBadRequest,
	parley.EUNAUTHORIZED: http.StatusUnauthorized,
	parley.EFORBIDDEN:    http.StatusForbidden,
	parley.ENOTFOUND:     http.StatusNotFound,
	parley.ECONFLICT:     http.StatusConflict,
	parley.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	parley.ERATELIMIT:    http.StatusTooManyRequests,
	parley.ESTORAGEFULL:  http.StatusInsufficientStorage,
	parley.EINTERNAL:     http.StatusInternalServerError,
}

// fail renders an error page: the service's message for the user's mistakes, "internal
// error" (and a log line) for ours.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, u *user, err error) {
	code := parley.ErrorCode(err)
	if code == parley.EINTERNAL {
		if r.Context().Err() != nil {
			return
		}
		h.log.Error("web: request failed", "path", redact.Path(r.URL.Path), "err", redact.String(err.Error()))
	}
	status, ok := statusOf[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	v := &view{Title: http.StatusText(status), User: u, Error: parley.ErrorMessage(err)}
	var pe *parley.Error
	if errors.As(err, &pe) && code != parley.EINTERNAL {
		v.Hint = pe.Hint
	}
	h.render(w, r, status, "error", v)
}

// ctxDone reports whether the request is gone.
func ctxDone(ctx context.Context) bool { return ctx.Err() != nil }
