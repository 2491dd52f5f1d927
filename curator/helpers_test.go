package curator

import "github.com/nexus-memory/nexus/retention/retentiontest"

// The helpers the curator's tests share with the other packages built on
// review.
var (
	t0        = retentiontest.T0
	mustVault = retentiontest.MustVault
	fact      = retentiontest.Fact
	readFile  = retentiontest.ReadFile
	exists    = retentiontest.Exists
)
