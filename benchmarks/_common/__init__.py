"""Shared benchmark plumbing: measuring runs, writing results, the datasets, the linking-speed child process."""
