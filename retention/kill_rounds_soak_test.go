//go:build unix && soak

package retention

// killRounds is how many times TestReviewSurvivesSIGKILL kills.
const killRounds = 300
