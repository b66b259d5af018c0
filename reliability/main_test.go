package reliability_test

import (
	"testing"

	"github.com/parleyhq/parley/internal/servertest"
)

func TestMain(m *testing.M) { servertest.Main(m) }
