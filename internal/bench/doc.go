// Package bench is `waymark bench`: it starts a Waymark
// server (and optionally worker processes) as child processes of the same
// binary on one database, imports a generated fixture whose model is a
// zero-latency OpenAI-compatible server in this process, drives whole guided
// tours through the HTTP API from concurrent conversations (start, answer
// every card at random, end the tour) and reports the figures beside the raw
// commit rate of the same database, so results read as ratios.
package bench
