//go:build !race

package ui

const raceEnabled = false
