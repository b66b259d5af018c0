package room

import (
	"testing"

	"github.com/parleyhq/parley"
	"github.com/parleyhq/parley/storetest"
)

// TestMemRates runs the bucket arithmetic checks on the in-memory buckets that rooms on
// SQLite use; postgres runs the same on its shared ones.
func TestMemRates(t *testing.T) {
	storetest.RunRates(t, func(t *testing.T) parley.RateStore {
		var l limits
		l.init(nil)
		return l.rates()
	})
}
