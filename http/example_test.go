package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/parleyhq/parley"
	phttp "github.com/parleyhq/parley/http"
	"github.com/parleyhq/parley/internal/mock"
)

// A seat posts a message; the service refuses it as a repeat, and the client gets the
// original's seq with the error.
func ExampleNewServer() {
	svc := &mock.RoomService{
		AuthenticateFn: func(ctx context.Context, token string) (*parley.Caller, error) {
			return &parley.Caller{Seat: &parley.Seat{Room: "team", Name: "builder"}}, nil
		},
		PostFn: func(ctx context.Context, c *parley.Caller, room string, body []byte, key string) (*parley.PostResult, error) {
			return nil, parley.Errorf(parley.ECONFLICT, "%s already posted this as #3", c.Seat.Name).With("seq", 3)
		},
	}
	ts := httptest.NewServer(phttp.NewServer(svc, phttp.WithLogger(slog.New(slog.DiscardHandler))))
	defer ts.Close()

	req, _ := http.NewRequest("POST", ts.URL+"/v1/rooms/team/messages", strings.NewReader("v1 note limiter to all n=1\noutcome done\n"))
	req.Header.Set("Authorization", "Bearer pk_…")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Status)
	fmt.Print(string(body))
	// Output:
	// 409 Conflict
	// {"error":{"code":"conflict","message":"builder already posted this as #3"},"seq":3}
}
