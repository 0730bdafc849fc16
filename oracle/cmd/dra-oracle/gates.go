package main

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// knownGates are the upstream feature gate names the oracle understands.
// Every gate not named on the command line is off: the oracle has no notion
// of release defaults, the caller always says what it wants.
var knownGates = []string{
	"DRAAdminAccess",
	"DRAPrioritizedList",
	"DRAPartitionableDevices",
	"DRADeviceTaints",
	"DRAConsumableCapacity",
	"DRADeviceBindingConditions",
	"DRAResourceClaimDeviceStatus",
	"DRAListTypeAttributes",
}

type gates map[string]bool

func parseGates(spec string) (gates, error) {
	out := gates{}
	for _, name := range knownGates {
		out[name] = false
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			return nil, usagef("feature gate %q: expected Name=true|false", item)
		}
		name = strings.TrimSpace(name)
		if _, known := out[name]; !known {
			return nil, usagef("unknown feature gate %q (known: %s)", name, strings.Join(knownGates, ", "))
		}
		enabled, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return nil, usagef("feature gate %s: invalid value %q", name, value)
		}
		out[name] = enabled
	}
	return out, nil
}

// allocatorFeatures maps gates to the allocator's feature switches the way
// kube-scheduler does: binding conditions are only active together with the
// device status gate.
func (g gates) allocatorFeatures() structured.Features {
	return structured.Features{
		AdminAccess:            g["DRAAdminAccess"],
		PrioritizedList:        g["DRAPrioritizedList"],
		PartitionableDevices:   g["DRAPartitionableDevices"],
		DeviceTaints:           g["DRADeviceTaints"],
		ConsumableCapacity:     g["DRAConsumableCapacity"],
		DeviceBindingAndStatus: g["DRADeviceBindingConditions"] && g["DRAResourceClaimDeviceStatus"],
		ListTypeAttributes:     g["DRAListTypeAttributes"],
	}
}

func (g gates) celFeatures() cel.Features {
	return cel.Features{
		EnableConsumableCapacity: g["DRAConsumableCapacity"],
		EnableListTypeAttributes: g["DRAListTypeAttributes"],
	}
}

func (g gates) String() string {
	parts := make([]string, 0, len(knownGates))
	for _, name := range knownGates {
		parts = append(parts, fmt.Sprintf("%s=%t", name, g[name]))
	}
	return strings.Join(parts, ",")
}
