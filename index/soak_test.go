//go:build soak

package index

// The soak build (go test -tags soak ./index) runs the randomised loops
// ten times as long.
func init() { soakFactor = 10 }
