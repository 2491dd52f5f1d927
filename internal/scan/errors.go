package scan

import "errors"

// ErrRefused is wrapped by every [*Error]. It is the value of
// vault.ErrRefused, which callers match: the scan is a leaf helper and
// imports no Nexus package, so the sentinel is declared here and vault
// names it (as it names atomicfile.ErrConflict).
var ErrRefused = errors.New("refused")
