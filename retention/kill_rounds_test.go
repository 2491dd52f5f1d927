//go:build unix && !soak

package retention

// killRounds is how many times TestReviewSurvivesSIGKILL kills; the soak
// build (go test -tags soak) kills 300 times.
const killRounds = 25
