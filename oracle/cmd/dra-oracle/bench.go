package main

import (
	"context"
	"fmt"
	"sort"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// placement records where one claim of the benchmark went.
type placement struct {
	Claim   string   `json:"claim"`
	Node    string   `json:"node,omitempty"`
	Devices []string `json:"devices,omitempty"`
	Status  string   `json:"status"`
	Message string   `json:"message,omitempty"`
}

type benchAllocateResult struct {
	Nodes          int         `json:"nodes"`
	Slices         int         `json:"slices"`
	Claims         int         `json:"claims"`
	Allocated      int         `json:"allocated"`
	Unsatisfiable  int         `json:"unsatisfiable"`
	Errors         int         `json:"errors"`
	AllocateCalls  int         `json:"allocateCalls"`
	Seconds        float64     `json:"seconds"`
	ClaimsPerSec   float64     `json:"claimsPerSecond"`
	PerClaimMicros percentiles `json:"perClaimMicroseconds"`
	Resume         bool        `json:"resume"`
	Repeat         int         `json:"repeat"`
	Allocator      string      `json:"allocator,omitempty"`
	// SecondsPerRepeat is Seconds / Repeat: one whole loop over the claims.
	SecondsPerRepeat float64 `json:"secondsPerRepeat"`
	// MaxRSSBytes is the process's peak resident set size (getrusage), bundle included.
	MaxRSSBytes int64       `json:"maxRSSBytes"`
	Placements  []placement `json:"placements,omitempty"`
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// benchAllocate is the scheduler's loop reduced to DRA: for each pending
// claim in input order, build an allocator over the current allocated state
// (as PreFilter does once per pod), try the nodes in input order and keep
// the first node where Allocate succeeds (as Filter would, without scoring),
// then count that claim's devices as allocated.
//
// With resume, the node scan for a claim starts at the node where the
// previous claim landed instead of the first node. That is only equivalent
// to the full scan when a node that could not take one claim cannot take
// any later claim either (identical claims, nothing freed), which holds for
// the benchmark's uniform single-GPU claims.
//
// With repeat > 1 the whole loop runs once untimed (warming the CEL cache and
// Go's allocator code paths, as a long-running scheduler is warm) and then
// repeat times, each from the bundle's initial allocated state and with the
// same CEL cache; counts and placements are those of the last repetition,
// Seconds and the per-claim percentiles cover every timed repetition. This
// times small allocations in-process instead of process start-up.
func benchAllocate(b *bundle, g gates, allocators []string, resume bool, withPlacements bool, repeat int) benchAllocateResult {
	if repeat < 1 {
		repeat = 1
	}
	enableAllocators(allocators)
	defer enableAllocators(nil)
	celCache := cel.NewCache(schedulerCELCacheSize, g.celFeatures())
	if repeat > 1 {
		benchAllocateOnce(b, g, celCache, resume, false)
	}
	var out benchAllocateResult
	var durations []time.Duration
	seconds := 0.0
	for r := 0; r < repeat; r++ {
		var d []time.Duration
		out, d = benchAllocateOnce(b, g, celCache, resume, withPlacements && r == repeat-1)
		durations = append(durations, d...)
		seconds += out.Seconds
	}
	out.Repeat = repeat
	out.Seconds = seconds
	out.SecondsPerRepeat = seconds / float64(repeat)
	if seconds > 0 {
		out.ClaimsPerSec = float64(out.Claims*repeat) / seconds
	}
	out.PerClaimMicros = summarize(durations)
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) == nil {
		out.MaxRSSBytes = usage.Maxrss * 1024 // Linux reports KiB
	}
	return out
}

func benchAllocateOnce(b *bundle, g gates, celCache *cel.Cache, resume bool, withPlacements bool) (benchAllocateResult, []time.Duration) {
	features := g.allocatorFeatures()
	var inUse []*resourceapi.ResourceClaim
	var pending []*resourceapi.ResourceClaim
	for _, entry := range b.claims {
		if entry.claim.Status.Allocation != nil {
			inUse = append(inUse, entry.claim)
		} else {
			pending = append(pending, entry.claim)
		}
	}
	state := allocatedStateFrom(inUse, features.ConsumableCapacity)
	lister := classLister{b.classes}

	out := benchAllocateResult{Nodes: len(b.nodes), Slices: len(b.slices), Claims: len(pending), Resume: resume}
	durations := make([]time.Duration, 0, len(pending))
	startNode := 0
	total := time.Now()
	for _, claim := range pending {
		start := time.Now()
		p := placement{Claim: claimKey(claim), Status: "unsatisfiable"}
		allocator, err := structured.NewAllocator(context.Background(), features, state, lister, b.slices, celCache)
		if err != nil {
			p.Status, p.Message = "error", err.Error()
		} else {
			if out.Allocator == "" {
				out.Allocator = channelOf(allocator)
			}
			nodes := b.nodes
			for offset := 0; offset < len(nodes); offset++ {
				index := offset
				if resume {
					index = (startNode + offset) % len(nodes)
				}
				node := nodes[index]
				out.AllocateCalls++
				results, err := allocateOnNode(allocator, node, claim)
				if err != nil {
					p.Status, p.Message = "error", err.Error()
					break
				}
				if results == nil {
					continue
				}
				p.Status, p.Node = "allocated", node.Name
				for _, result := range results[0].Devices.Results {
					p.Devices = append(p.Devices, fmt.Sprintf("%s/%s/%s", result.Driver, result.Pool, result.Device))
				}
				addAllocation(&state, &results[0], features.ConsumableCapacity)
				startNode = index
				break
			}
		}
		durations = append(durations, time.Since(start))
		switch p.Status {
		case "allocated":
			out.Allocated++
		case "error":
			out.Errors++
		default:
			out.Unsatisfiable++
		}
		if withPlacements {
			out.Placements = append(out.Placements, p)
		}
	}
	out.Seconds = time.Since(total).Seconds()
	if out.Seconds > 0 {
		out.ClaimsPerSec = float64(len(pending)) / out.Seconds
	}
	return out, durations
}

func allocateOnNode(allocator structured.Allocator, node *v1.Node, claim *resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	return allocateWithTimeout(context.Background(), allocator, node, []*resourceapi.ResourceClaim{claim}, defaultFilterTimeout)
}

func claimKey(claim *resourceapi.ResourceClaim) string {
	if claim.Namespace != "" {
		return claim.Namespace + "/" + claim.Name
	}
	return claim.Name
}

func summarize(durations []time.Duration) percentiles {
	if len(durations) == 0 {
		return percentiles{}
	}
	sorted := append([]time.Duration(nil), durations...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	at := func(q float64) float64 {
		i := int(q * float64(len(sorted)-1))
		return float64(sorted[i].Nanoseconds()) / 1e3
	}
	return percentiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: at(1)}
}
