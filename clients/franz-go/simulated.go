package main

// RunSimulated on a Go without the runtime internals simulated time needs:
// the protocol's refusal.
func RunSimulated() int {
	printJobError("simulated time not supported")
	return kExitJobError
}
