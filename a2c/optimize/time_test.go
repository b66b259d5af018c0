package optimize

import "time"

// testTime is a fixed clock for manifests written by tests.
var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
