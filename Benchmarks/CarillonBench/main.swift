// Benchmark driver; see Benchmarks/README.md.
