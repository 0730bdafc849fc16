package main

import (
	"context"
	"fmt"
	"sort"
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
	Placements     []placement `json:"placements,omitempty"`
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
func benchAllocate(b *bundle, g gates, allocators []string, resume bool, withPlacements bool) benchAllocateResult {
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
	enableAllocators(allocators)
	defer enableAllocators(nil)
	celCache := cel.NewCache(schedulerCELCacheSize, g.celFeatures())
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
	out.PerClaimMicros = summarize(durations)
	return out
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
