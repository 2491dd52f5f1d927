// Package synctest holds the end-to-end tests of a vault kept on two
// machines by real sync engines: git with a local bare repository, and two
// Syncthing instances on 127.0.0.1. They build the nexus binary, run it on
// both copies, and check that nothing acknowledged is lost and no conflict
// copy is left unhandled (SPEC §11).
//
// The tests are behind the build tag "sync" (they take a minute and need
// git and syncthing installed); .ci/run runs them:
//
//	go test -tags sync -count=1 ./internal/synctest
package synctest
