//go:build !unix

package vault

import "io/fs"

// folderID is not known here (see machine_unix.go): a copied vault folder
// is told by the system's machine id alone, and a name used twice by the
// device claims.
func folderID(fs.FileInfo) string { return "" }
