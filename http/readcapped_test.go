package http

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/parleyhq/parley"
)

// TestReadCapped compares the pooled reader of post bodies with readBody (io.ReadAll through
// http.MaxBytesReader) on bodies at, under and over the limit, read whole or a byte at a
// time, and on a reader that fails.
func TestReadCapped(t *testing.T) {
	const limit = 5000
	for _, n := range []int{0, 1, 4095, 4096, 4097, limit - 1, limit, limit + 1, 3 * limit} {
		body := strings.Repeat("x", n)
		for _, slow := range []bool{false, true} {
			req := httptest.NewRequest("POST", "/", strings.NewReader(body))
			want, werr := readBody(httptest.NewRecorder(), req, limit)
			var src io.Reader = strings.NewReader(body)
			if slow {
				src = iotest.OneByteReader(src)
			}
			got, gerr := readCapped(src, make([]byte, 0, 7), limit)
			if (gerr == nil) != (werr == nil) || gerr != nil && (parley.ErrorCode(gerr) != parley.ErrorCode(werr) || gerr.Error() != werr.Error()) {
				t.Fatalf("%d bytes (a byte at a time: %v): error %v, readBody's %v", n, slow, gerr, werr)
			}
			if werr == nil && !bytes.Equal(got, want) {
				t.Errorf("%d bytes: read %d bytes, readBody %d", n, len(got), len(want))
			}
		}
	}
	// A failing connection is a bad request naming the failure.
	_, err := readCapped(iotest.DataErrReader(iotest.ErrReader(errors.New("reset by peer"))), nil, limit)
	if parley.ErrorCode(err) != parley.EINVALID || !strings.Contains(err.Error(), "reset by peer") {
		t.Errorf("failing reader: %v", err)
	}
}
