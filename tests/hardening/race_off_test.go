//go:build !race

package hardening_test

const raceEnabled = false
