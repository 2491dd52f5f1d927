//go:build !unix && !lite

package main

// ignoreSIGPIPE is a no-op where broken pipes do not raise a signal.
func ignoreSIGPIPE() {}
