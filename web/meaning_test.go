package web_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/parleyhq/parley/web"
)

// isoRE is the UI's one time format as shown: ISO basic UTC to the second.
var isoRE = regexp.MustCompile(`^\d{8}T\d{6}Z$`)

// timeRE finds every <time> element a page writes: its datetime, its tooltip, its text.
var timeRE = regexp.MustCompile(`<time datetime="([^"]+)" title="([^"]+)">([^<]+)</time>`)

// TestOneTimeFormat: every time on the transcript and the rooms list is written one way, ISO
// basic UTC as history writes it, inside a <time> with RFC 3339 and the long form in its title;
// the old forms (30 Nov 09:33:48 UTC, 2026-11-30 09:33Z) are gone.
func TestOneTimeFormat(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	b := f.browser(t)
	b.signIn(adminToken)
	for _, path := range []string{"/", "/rooms/limiter"} {
		_, body := b.get(path)
		times := timeRE.FindAllStringSubmatch(body, -1)
		if len(times) == 0 {
			t.Errorf("%s: no <time> element", path)
		}
		for _, m := range times {
			if !isoRE.MatchString(m[3]) || !strings.HasSuffix(m[1], "Z") || !strings.HasSuffix(m[2], " UTC") {
				t.Errorf("%s: time written %q (datetime %q, title %q)", path, m[3], m[1], m[2])
			}
		}
		if old := regexp.MustCompile(`\d{1,2} [A-Z][a-z]{2} \d\d:\d\d:\d\d UTC<|\d{4}-\d\d-\d\d \d\d:\d\dZ`).FindString(body); old != "" {
			t.Errorf("%s still writes a time as %q", path, old)
		}
	}
}

// TestAskTimeShownOnce: an open ask whose line already writes its time does not repeat it, on
// the inbox nor on the State tab.
func TestAskTimeShownOnce(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	b := f.browser(t)
	b.signIn(f.tokens["builder"])
	for _, path := range []string{"/rooms/limiter", "/rooms/limiter/state"} {
		_, body := b.get(path)
		// The transcript writes the ask once too, in the message itself.
		want := 1
		if path == "/rooms/limiter" {
			want = 2
		}
		if n := strings.Count(body, "20301201T1800"); n != want {
			t.Errorf("%s writes the ask's time %d times, want %d", path, n, want)
		}
	}
}

// TestAdminRoomSaysWhyNoInbox: the admin has no seat, so the room page says so and how to get
// one, instead of leaving the side column blank.
func TestAdminRoomSaysWhyNoInbox(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	b := f.browser(t)
	b.signIn(adminToken)
	_, body := b.get("/rooms/limiter")
	if !strings.Contains(body, `id="no-seat"`) || !strings.Contains(body, "parley seat add limiter NAME --role human") ||
		strings.Contains(body, `action="/rooms/limiter/post"`) {
		t.Errorf("the admin's room page does not say why it has no inbox:\n%s", body)
	}
	// A seat sees its inbox and the form, not the admin's note.
	s := f.browser(t)
	s.signIn(f.tokens["yu"])
	if _, body := s.get("/rooms/limiter"); strings.Contains(body, `id="no-seat"`) || !strings.Contains(body, `id="inbox-h"`) {
		t.Error("a seat's room page shows the admin's note or no inbox")
	}
}

// TestStatePageDecisions: an answer's plan line and a decide's rec are not listed as
// decisions; the decide's outcome is.
func TestStatePageDecisions(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.post(t, "lead", request)
	f.post(t, "builder", "v1 answer limiter to lead re 1 n=2\noutcome accepted\nplan start on Monday\n")
	f.post(t, "yu", "v1 decide limiter to all n=2\noutcome Redis sliding window\nrec keep a bypass flag\n")
	b := f.browser(t)
	b.signIn(f.tokens["yu"])
	_, body := b.get("/rooms/limiter/state")
	i := strings.Index(body, "Decisions</h3>")
	j := strings.Index(body, "Done</h3>")
	if i < 0 || j < i {
		t.Fatalf("no Decisions section:\n%s", body)
	}
	dec := body[i:j]
	for _, want := range []string{"outcome accepted", "outcome Redis sliding window"} {
		if !strings.Contains(dec, want) {
			t.Errorf("decisions lack %q:\n%s", want, dec)
		}
	}
	for _, bad := range []string{"start on Monday", "keep a bypass flag"} {
		if strings.Contains(dec, bad) {
			t.Errorf("decisions list %q:\n%s", bad, dec)
		}
	}
}
