//go:build !unix

package main

// ignoreSIGPIPE is a no-op where broken pipes do not raise a signal.
func ignoreSIGPIPE() {}
