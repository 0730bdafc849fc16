package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

const (
	exitOK            = 0
	exitInvalid       = 1
	exitUsage         = 2
	exitUnsatisfiable = 3
	exitError         = 4

	// schedulerCELCacheSize is the size of kube-scheduler's compiled
	// expression cache.
	schedulerCELCacheSize = 10
	// defaultFilterTimeout is kube-scheduler's default DRA Filter timeout.
	defaultFilterTimeout = 10 * time.Second

	messageUnsatisfiable = "cannot allocate all claims"
)

// classLister serves the bundle's classes in input order, like the informer
// lister the upstream tests use; a missing class reads like client-go's
// generated lister error (resource "deviceclass").
type classLister struct {
	classes []*resourceapi.DeviceClass
}

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	return l.classes, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	for _, class := range l.classes {
		if class.Name == name {
			return class, nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclass"}, name)
}

// allocateOptions are the knobs of one allocation run.
type allocateOptions struct {
	node    string
	gates   gates
	timeout time.Duration
	// allocators restricts which upstream implementations NewAllocator may
	// pick (structured.EnableAllocators); empty means all, as in the scheduler.
	allocators []string
}

// outcome is what `allocate` prints.
type outcome struct {
	Status  string `json:"status"`
	Claims  []any  `json:"claims"`
	Message string `json:"message"`
	// Allocator names the upstream implementation that ran. Only printed by
	// allocate-batch and with --verbose.
	Allocator string `json:"allocator,omitempty"`

	exitCode int
}

// allocatedStateFrom builds the scheduler's view of devices in use from the
// claims that already carry an allocation: admin-access results do not
// count, results with a share ID count as shares (only when consumable
// capacity is enabled, as in kube-scheduler), everything else is exclusive.
func allocatedStateFrom(claims []*resourceapi.ResourceClaim, consumableCapacity bool) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		addAllocation(&state, claim.Status.Allocation, consumableCapacity)
	}
	return state
}

func addAllocation(state *structured.AllocatedState, allocation *resourceapi.AllocationResult, consumableCapacity bool) {
	for _, result := range allocation.Devices.Results {
		if result.AdminAccess != nil && *result.AdminAccess {
			continue
		}
		id := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
		if consumableCapacity && result.ShareID != nil {
			state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, result.ShareID))
			if result.ConsumedCapacity != nil {
				state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, result.ConsumedCapacity))
			}
			continue
		}
		state.AllocatedDevices.Insert(id)
	}
}

func channelOf(allocator structured.Allocator) string {
	method := reflect.ValueOf(allocator).MethodByName("Channel")
	if !method.IsValid() {
		return ""
	}
	out := method.Call(nil)
	if len(out) != 1 {
		return ""
	}
	return out[0].String()
}

func enableAllocators(names []string) {
	structured.EnableAllocators(names...)
}

func parseAllocators(spec string) ([]string, error) {
	if spec == "" || spec == "auto" {
		return nil, nil
	}
	var names []string
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		switch name {
		case "stable", "incubating", "experimental":
			names = append(names, name)
		case "":
		default:
			return nil, usagef("unknown allocator %q (stable, incubating, experimental or auto)", name)
		}
	}
	return names, nil
}

// runAllocate allocates every claim of the bundle that has no allocation yet,
// together, for one node.
func runAllocate(b *bundle, opts allocateOptions) outcome {
	node, err := b.pickNode(opts.node)
	if err != nil {
		return failure(err)
	}
	var inUse []*resourceapi.ResourceClaim
	var pending []claimEntry
	for _, entry := range b.claims {
		if entry.claim.Status.Allocation != nil {
			inUse = append(inUse, entry.claim)
		} else {
			pending = append(pending, entry)
		}
	}
	features := opts.gates.allocatorFeatures()
	state := allocatedStateFrom(inUse, features.ConsumableCapacity)

	enableAllocators(opts.allocators)
	defer enableAllocators(nil)

	ctx := context.Background()
	celCache := cel.NewCache(schedulerCELCacheSize, opts.gates.celFeatures())
	allocator, err := structured.NewAllocator(ctx, features, state, classLister{b.classes}, b.slices, celCache)
	if err != nil {
		return outcome{Status: "error", Claims: rawClaims(pending), Message: err.Error(), exitCode: exitError}
	}
	channel := channelOf(allocator)

	claims := make([]*resourceapi.ResourceClaim, len(pending))
	for i, entry := range pending {
		claims[i] = entry.claim
	}
	results, err := allocateWithTimeout(ctx, allocator, node, claims, opts.timeout)
	switch {
	case err != nil:
		return outcome{Status: "error", Claims: rawClaims(pending), Message: err.Error(), Allocator: channel, exitCode: exitError}
	case len(results) != len(claims):
		// nil, nil: cannot allocate on this node. (With zero claims upstream
		// may return nil as well, which is success: nothing to do.)
		return outcome{Status: "unsatisfiable", Claims: rawClaims(pending), Message: messageUnsatisfiable, Allocator: channel, exitCode: exitUnsatisfiable}
	}
	out := make([]any, len(pending))
	for i, entry := range pending {
		withAllocation, err := attachAllocation(entry.raw, &results[i])
		if err != nil {
			return outcome{Status: "error", Claims: rawClaims(pending), Message: "internal: " + err.Error(), Allocator: channel, exitCode: exitError}
		}
		out[i] = withAllocation
	}
	return outcome{Status: "allocated", Claims: out, Message: "", Allocator: channel, exitCode: exitOK}
}

func allocateWithTimeout(ctx context.Context, allocator structured.Allocator, node *v1.Node, claims []*resourceapi.ResourceClaim, timeout time.Duration) ([]resourceapi.AllocationResult, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return allocator.Allocate(ctx, node, claims)
}

func failure(err error) outcome {
	code := exitInvalid
	status := "invalid"
	if _, ok := err.(usageError); ok {
		code = exitUsage
		status = "usage"
	}
	return outcome{Status: status, Claims: []any{}, Message: err.Error(), exitCode: code}
}

func rawClaims(entries []claimEntry) []any {
	out := make([]any, len(entries))
	for i, entry := range entries {
		out[i] = entry.raw
	}
	return out
}

// attachAllocation returns a shallow copy of the raw claim with
// status.allocation set to the result.
func attachAllocation(raw map[string]any, result *resourceapi.AllocationResult) (map[string]any, error) {
	encoded, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	var allocation map[string]any
	if err := json.Unmarshal(encoded, &allocation); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(raw)+1)
	for k, v := range raw {
		out[k] = v
	}
	status := map[string]any{}
	if existing, ok := raw["status"].(map[string]any); ok {
		for k, v := range existing {
			status[k] = v
		}
	}
	status["allocation"] = allocation
	out["status"] = status
	return out, nil
}

func describeOutcome(o outcome) string {
	return fmt.Sprintf("%s (%d claims)", o.Status, len(o.Claims))
}
