// Package archcheck holds tests that keep the documents honest about the
// code they describe: ARCHITECTURE.md's block of allowed imports against
// `go list`, the file lists of package docs against the files beside them,
// benchmark figures kept out of comments (docs/benchmarks.md holds them,
// and every pointer there names a heading it has), shaders/build.sh's
// kernel count, the README's third_party/ entry against go.mod, and the ui
// root's size (a router, at most 2,000 lines). It has
// no code of its own; its tests read the repository.
package archcheck
