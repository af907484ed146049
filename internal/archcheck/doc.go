// Package archcheck holds tests that keep the documents honest about the
// code they describe: ARCHITECTURE.md's table of allowed imports against
// `go list`, and the file lists of package docs against the files beside
// them. It has no code of its own; its tests read the repository.
package archcheck
