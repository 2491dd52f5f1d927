// Package policy holds no code: its test states which Nexus packages may
// import which, as Go's own src/go/build/deps_test.go does.
package policy
